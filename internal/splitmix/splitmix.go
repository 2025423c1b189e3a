// Package splitmix holds the finaliser of SplitMix64 (Steele, Lea and
// Flood, "Fast splittable pseudorandom number generators", 2014) and its
// inverse: the one home of the 64-bit mixing that the book's in-memory
// index (book.Loaded) and the coordinator's cross-check draws use.
package splitmix

// Mix is a bijection of the 64-bit words that makes any set of them look
// random: a well spread 64-bit hash of x. Mix(0) is 0.
func Mix(x uint64) uint64 {
	x = (x ^ x>>30) * 0xbf58476d1ce4e5b9
	x = (x ^ x>>27) * 0x94d049bb133111eb
	return x ^ x>>31
}

// Unmix is the inverse of Mix: each xor-shift undone by xor-shifts, each
// multiplication by the inverse of its constant modulo 2^64.
func Unmix(x uint64) uint64 {
	x ^= x>>31 ^ x>>62
	x *= 0x319642b2d24d8ec3
	x ^= x>>27 ^ x>>54
	x *= 0x96de1b173f119089
	return x ^ x>>30 ^ x>>60
}
