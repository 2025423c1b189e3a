package coordinator

// keySet is a set of position keys: open addressing with linear probing in
// a power-of-two table kept at most 3/4 full, 8 bytes a slot. A Go map
// takes several times that, and a plan holds every position of a job.
type keySet struct {
	slots  []uint64 // key+1, 0 for an empty slot
	n      int
	hasMax bool // the key ^uint64(0), which key+1 cannot hold
	shift  uint // 64 - log2(len(slots))
}

// newKeySet returns a set sized for about n keys.
func newKeySet(n int) *keySet {
	size := 16
	for size*3/4 < n {
		size *= 2
	}
	s := &keySet{slots: make([]uint64, size)}
	s.shift = 64 - uint(log2(size))
	return s
}

func log2(n int) int {
	k := 0
	for 1<<k < n {
		k++
	}
	return k
}

// add inserts key and reports whether it was new.
func (s *keySet) add(key uint64) bool {
	if key == ^uint64(0) {
		added := !s.hasMax
		s.hasMax = true
		return added
	}
	if (s.n+1)*4 > len(s.slots)*3 {
		s.grow()
	}
	if s.insert(key + 1) {
		s.n++
		return true
	}
	return false
}

// has reports whether key is in the set.
func (s *keySet) has(key uint64) bool {
	if key == ^uint64(0) {
		return s.hasMax
	}
	mask := uint64(len(s.slots) - 1)
	for i := s.home(key + 1); ; i = (i + 1) & mask {
		switch s.slots[i] {
		case 0:
			return false
		case key + 1:
			return true
		}
	}
}

// len returns the number of keys in the set.
func (s *keySet) len() int {
	if s.hasMax {
		return s.n + 1
	}
	return s.n
}

// home returns the first slot to probe for the stored value v: Fibonacci
// hashing spreads keys that differ only in a few bits.
func (s *keySet) home(v uint64) uint64 { return (v * 0x9E3779B97F4A7C15) >> s.shift }

// insert stores v (a key + 1) unless present, reporting whether it stored.
func (s *keySet) insert(v uint64) bool {
	mask := uint64(len(s.slots) - 1)
	for i := s.home(v); ; i = (i + 1) & mask {
		switch s.slots[i] {
		case 0:
			s.slots[i] = v
			return true
		case v:
			return false
		}
	}
}

// grow doubles the table.
func (s *keySet) grow() {
	old := s.slots
	s.slots = make([]uint64, 2*len(old))
	s.shift--
	for _, v := range old {
		if v != 0 {
			s.insert(v)
		}
	}
}
