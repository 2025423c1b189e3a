//go:build gc && !purego

#include "textflag.h"

// func prefetch(addr *uint64)
TEXT ·prefetch(SB), NOSPLIT, $0-8
	MOVD addr+0(FP), R0
	PRFM (R0), PLDL1KEEP
	RET

// func prefetchEach(base *uint64, index *[lineSlots]uint64, n int)
TEXT ·prefetchEach(SB), NOSPLIT, $0-24
	MOVD base+0(FP), R0
	MOVD index+8(FP), R1
	MOVD n+16(FP), R2
	CMP $0, R2
	BLE done
loop:
	MOVD.P 8(R1), R3
	ADD R3<<3, R0, R4
	PRFM (R4), PLDL1KEEP
	SUBS $1, R2, R2
	BNE loop
done:
	RET
