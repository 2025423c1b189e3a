//go:build gc && !purego

#include "textflag.h"

// func prefetch(addr *uint64)
TEXT ·prefetch(SB), NOSPLIT, $0-8
	MOVQ addr+0(FP), AX
	PREFETCHT0 (AX)
	RET

// func prefetchEach(base *uint64, index *[lineSlots]uint64, n int)
TEXT ·prefetchEach(SB), NOSPLIT, $0-24
	MOVQ base+0(FP), AX
	MOVQ index+8(FP), BX
	MOVQ n+16(FP), CX
	TESTQ CX, CX
	JLE done
loop:
	MOVQ (BX), DX
	PREFETCHT0 (AX)(DX*8)
	ADDQ $8, BX
	DECQ CX
	JNZ loop
done:
	RET
