//go:build linux

package solver

import (
	"bufio"
	"fmt"
	"os"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"
	"unsafe"
)

// mapping returns the /proc/self/smaps record of the mapping that holds
// addr: its size and its anonymous huge pages in KiB; ok is false if no
// mapping holds addr.
func mapping(t *testing.T, addr uintptr) (sizeKiB, hugeKiB int, ok bool) {
	t.Helper()
	f, err := os.Open("/proc/self/smaps")
	if err != nil {
		t.Skipf("no /proc/self/smaps: %v", err)
	}
	defer f.Close()
	in := false
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		if len(fields) == 0 {
			continue
		}
		if lo, hi, isRange := strings.Cut(fields[0], "-"); isRange && !strings.HasSuffix(fields[0], ":") {
			l, err1 := strconv.ParseUint(lo, 16, 64)
			h, err2 := strconv.ParseUint(hi, 16, 64)
			if err1 == nil && err2 == nil {
				if in {
					return sizeKiB, hugeKiB, true
				}
				in = uint64(addr) >= l && uint64(addr) < h
				continue
			}
		}
		if !in || len(fields) < 2 {
			continue
		}
		n, _ := strconv.Atoi(fields[1])
		switch fields[0] {
		case "Size:":
			sizeKiB = n
		case "AnonHugePages:":
			hugeKiB = n
		}
	}
	return sizeKiB, hugeKiB, in
}

// thpMode returns the selected mode of transparent huge pages (always,
// madvise or never), or "" if the kernel does not say.
func thpMode() string { return thpSetting("enabled") }

// thpSetting returns the selected value of the transparent huge page
// setting name ("enabled", "defrag"), "" if unknown.
func thpSetting(name string) string {
	data, err := os.ReadFile("/sys/kernel/mm/transparent_hugepage/" + name)
	if err != nil {
		return ""
	}
	_, after, ok := strings.Cut(string(data), "[")
	mode, _, ok2 := strings.Cut(after, "]")
	if !ok || !ok2 {
		return ""
	}
	return mode
}

func TestAllocSlots_small(t *testing.T) {
	slots, mem, err := allocSlots(1000)
	if err != nil || len(slots) != 1000 || mem != nil {
		t.Fatalf("allocSlots(1000): %d slots, mem %d bytes, error %v; want a 1000-entry Go slice", len(slots), len(mem), err)
	}
}

// TestAllocSlots_mapped: a large table is mapped on a huge page boundary,
// zeroed, writable to its last entry, and backed by huge pages where the
// kernel offers them. Sizes that are not whole pages (a table is 16 bytes
// times a prime) are mapped and unmapped whole.
func TestAllocSlots_mapped(t *testing.T) {
	for _, n := range []int{hugePage / 8, 2 * 1048573, 2 * 2097143} {
		t.Run(fmt.Sprint(n), func(t *testing.T) {
			slots, mem, err := allocSlots(n)
			if err != nil {
				t.Fatal(err)
			}
			addr := uintptr(unsafe.Pointer(&slots[0]))
			if len(slots) != n || mem == nil || len(mem) < n*8 || addr%hugePage != 0 {
				t.Fatalf("%d slots at %#x, mapping of %d bytes: want %d slots on a huge page", len(slots), addr, len(mem), n)
			}
			for i := range slots {
				if slots[i] != 0 {
					t.Fatalf("slot %d is %#x, want 0", i, slots[i])
				}
				slots[i] = uint64(i)
			}
			size, huge, ok := mapping(t, addr)
			if !ok || size*1024 < n*8 {
				t.Fatalf("mapping of the slots: %d KiB (found %v), want at least %d bytes", size, ok, n*8)
			}
			// Huge pages are sure only where the kernel compacts memory
			// to get them when the slots are first touched; elsewhere a
			// fragmented machine may give small pages, which are slower,
			// not wrong.
			mode, defrag := thpMode(), thpSetting("defrag")
			compacts := defrag == "always" || defrag == "madvise" || defrag == "defer+madvise"
			if huge == 0 && (mode == "always" || mode == "madvise") {
				if compacts {
					t.Errorf("THP %q, defrag %q: no huge pages in the %d KiB mapping of the slots", mode, defrag, size)
				} else {
					t.Logf("THP %q, defrag %q: no huge pages in the %d KiB mapping of the slots (the kernel does not compact for them)", mode, defrag, size)
				}
			}
			freeSlots(mem)
			if _, _, ok := mapping(t, addr); ok {
				t.Errorf("freeSlots: %#x is still mapped", addr)
			}
		})
	}
}

// TestNewTable_unmapsWhenUnreachable: a table's mapping goes once the
// table is garbage.
func TestNewTable_unmapsWhenUnreachable(t *testing.T) {
	tab, err := NewTable(Standard, 16<<20)
	if err != nil {
		t.Fatal(err)
	}
	tab.Clear()
	addr := uintptr(unsafe.Pointer(&tab.slots[0]))
	if _, _, ok := mapping(t, addr); !ok {
		t.Fatalf("a new table's slots at %#x: not in a mapping", addr)
	}
	tab = nil
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); {
		runtime.GC()
		time.Sleep(10 * time.Millisecond)
		if _, _, ok := mapping(t, addr); !ok {
			return
		}
	}
	t.Errorf("an unreachable table's slots at %#x are still mapped after 10 s", addr)
}
