//go:build gc && !purego

#include "textflag.h"

// func fourCells7AVX2(cells *[lineSlots]uint64, n int)
//
// cells[i] = fourCells7(cells[i]) for i < n, rounded up to a multiple of
// 4: four boards a step, one in each 64-bit lane of a 256-bit register.
// Y0 holds the stones, Y15 the cells found; per direction s (7, 6, 8),
// as lineCells:
//
//	p = S<<s & S<<2s;  r |= p & S<<3s | p & S>>s
//	q = S>>s & S>>2s;  r |= q & S<<s  | q & S>>3s
TEXT ·fourCells7AVX2(SB), NOSPLIT, $0-16
	MOVQ cells+0(FP), AX
	MOVQ n+8(FP), CX
	TESTQ CX, CX
	JLE done

loop:
	VMOVDQU (AX), Y0

	// Vertical: three stones directly below.
	VPSLLQ $1, Y0, Y1
	VPSLLQ $2, Y0, Y2
	VPAND  Y1, Y2, Y15
	VPSLLQ $3, Y0, Y2
	VPAND  Y2, Y15, Y15

	// Horizontal, s = 7.
	VPSLLQ $7, Y0, Y1  // S<<s
	VPSLLQ $14, Y0, Y2 // S<<2s
	VPAND  Y1, Y2, Y3  // p
	VPSLLQ $21, Y0, Y2 // S<<3s
	VPAND  Y3, Y2, Y2
	VPOR   Y2, Y15, Y15
	VPSRLQ $7, Y0, Y4  // S>>s
	VPAND  Y3, Y4, Y3
	VPOR   Y3, Y15, Y15
	VPSRLQ $14, Y0, Y2 // S>>2s
	VPAND  Y4, Y2, Y3  // q
	VPAND  Y3, Y1, Y1
	VPOR   Y1, Y15, Y15
	VPSRLQ $21, Y0, Y2 // S>>3s
	VPAND  Y3, Y2, Y2
	VPOR   Y2, Y15, Y15

	// Diagonal going down to the right, s = 6.
	VPSLLQ $6, Y0, Y1
	VPSLLQ $12, Y0, Y2
	VPAND  Y1, Y2, Y3
	VPSLLQ $18, Y0, Y2
	VPAND  Y3, Y2, Y2
	VPOR   Y2, Y15, Y15
	VPSRLQ $6, Y0, Y4
	VPAND  Y3, Y4, Y3
	VPOR   Y3, Y15, Y15
	VPSRLQ $12, Y0, Y2
	VPAND  Y4, Y2, Y3
	VPAND  Y3, Y1, Y1
	VPOR   Y1, Y15, Y15
	VPSRLQ $18, Y0, Y2
	VPAND  Y3, Y2, Y2
	VPOR   Y2, Y15, Y15

	// Diagonal going up to the right, s = 8.
	VPSLLQ $8, Y0, Y1
	VPSLLQ $16, Y0, Y2
	VPAND  Y1, Y2, Y3
	VPSLLQ $24, Y0, Y2
	VPAND  Y3, Y2, Y2
	VPOR   Y2, Y15, Y15
	VPSRLQ $8, Y0, Y4
	VPAND  Y3, Y4, Y3
	VPOR   Y3, Y15, Y15
	VPSRLQ $16, Y0, Y2
	VPAND  Y4, Y2, Y3
	VPAND  Y3, Y1, Y1
	VPOR   Y1, Y15, Y15
	VPSRLQ $24, Y0, Y2
	VPAND  Y3, Y2, Y2
	VPOR   Y2, Y15, Y15

	VMOVDQU Y15, (AX)
	ADDQ $32, AX
	SUBQ $4, CX
	JG   loop
	VZEROUPPER

done:
	RET
