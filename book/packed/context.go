package packed

import (
	"math/bits"

	"github.com/c4book/c4book/solver"
)

// # Kinds and contexts
//
// Each position of the set is of one kind: scored by the rules (its player
// to move makes four now; or cannot stop the opponent's four next), or
// stored. A stored position's context is a number computed from its stones
// alone, by the scheme of its level; positions of one context share a code,
// so a scheme that puts positions of like scores together makes the codes
// short. The schemes are part of the format: a scheme, once written, never
// changes what it computes.
//
// Scheme 0: one context.
//
// Scheme 1: the threats on the board, 162 contexts. A threat is an empty
// cell where a player's stone would make four (solver's Position.Threats),
// counted in the odd rows (1, 3, 5 from the bottom) and the even rows, for
// the player to move and for the opponent, each count capped at 2; and
// whether the opponent has a threat the player to move must block now:
//
//	context = (((mineOdd*3 + mineEven)*3 + theirsOdd)*3 + theirsEven)*2 + forced
//
// In the theory of the game's end (Allis, 1988) the first player's odd
// threats and the second player's even ones win games; the level says which
// player is to move, so these counts say much of who wins, and how soon.

// kind is what a position of the set is, for the format.
type kind uint8

const (
	kindStored   kind = iota // its score is in the layers
	kindWinNow               // its player to move makes four now
	kindLoseNext             // its player to move cannot stop the opponent's four
)

// classify returns the kind of p, a position of the set, and its score if
// the rules give it.
func classify(p *solver.Position) (kind, int) {
	if s, ok := p.RuleScore(); ok {
		// A win now, or a full board (a draw): the set holds no position
		// whose last move made four.
		return kindWinNow, s
	}
	if p.LosesNext() {
		lo, _ := p.Board().ScoreRange(p.Moves())
		return kindLoseNext, lo
	}
	return kindStored, 0
}

// Context schemes.
const (
	schemeOne     = 0
	schemeThreats = 1
)

// schemeContexts returns the number of contexts of a scheme, and false if
// the scheme is unknown.
func schemeContexts(scheme uint8) (int, bool) {
	switch scheme {
	case schemeOne:
		return 1, true
	case schemeThreats:
		return 162, true
	}
	return 0, false
}

// schemes are the schemes a builder tries for each level, keeping the one
// that gives the smallest level.
var schemes = []uint8{schemeOne, schemeThreats}

// contextOf returns the context of p, a stored position, in scheme.
func contextOf(scheme uint8, p *solver.Position) int {
	if scheme == schemeOne {
		return 0
	}
	mine, theirs := p.Threats()
	odd := p.Board().OddRows()
	forced := 0
	if theirs&p.Playable() != 0 {
		forced = 1
	}
	ctx := capCount(mine & odd)
	ctx = ctx*3 + capCount(mine&^odd)
	ctx = ctx*3 + capCount(theirs&odd)
	ctx = ctx*3 + capCount(theirs&^odd)
	return ctx*2 + forced
}

// capCount returns the number of cells of x, at most 2.
func capCount(x uint64) int { return min(bits.OnesCount64(x), 2) }
