package config

import (
	"fmt"
	"math"
	"strconv"
	"strings"
)

// Size is an amount of memory in bytes. It is written as a whole number of
// bytes ("1048576") or with a unit suffix: binary KiB, MiB, GiB (powers of
// 1024) or decimal KB, MB, GB (powers of 1000), as in "64MiB" or "512MB".
// Suffixes are case-insensitive and may follow a space; "B" alone means
// bytes.
type Size int64

// Units of Size.
const (
	KiB Size = 1 << 10
	MiB Size = 1 << 20
	GiB Size = 1 << 30
	KB  Size = 1000
	MB  Size = 1000 * KB
	GB  Size = 1000 * MB
)

// sizeUnits are the suffixes of sizes, largest first: String prints a
// size in the first unit that divides it exactly.
var sizeUnits = []struct {
	suffix string
	bytes  Size
}{
	{"GiB", GiB}, {"GB", GB}, {"MiB", MiB}, {"MB", MB}, {"KiB", KiB}, {"KB", KB},
}

// errSizeSyntax is the explanation appended to every malformed size.
const errSizeSyntax = "use bytes or a suffix KiB, MiB, GiB, KB, MB, GB"

// ParseSize parses a size such as "64MiB", "1GiB", "512MB" or "1048576".
// The error says what is wrong and which forms are allowed.
func ParseSize(s string) (Size, error) {
	text := strings.TrimSpace(s)
	digits := len(text) - len(strings.TrimLeft(text, "0123456789"))
	suffix := strings.TrimSpace(text[digits:])
	if digits == 0 {
		return 0, fmt.Errorf("%q is not a size (%s)", s, errSizeSyntax)
	}
	unit := Size(1)
	if suffix != "" && !strings.EqualFold(suffix, "B") {
		unit = 0
		for _, u := range sizeUnits {
			if strings.EqualFold(suffix, u.suffix) {
				unit = u.bytes
			}
		}
		if unit == 0 {
			return 0, fmt.Errorf("%q is not a size (%s)", s, errSizeSyntax)
		}
	}
	n, err := strconv.ParseInt(text[:digits], 10, 64)
	if err != nil || n > math.MaxInt64/int64(unit) {
		return 0, fmt.Errorf("%q is too large a size", s)
	}
	return Size(n) * unit, nil
}

// String writes the size in the largest unit that divides it exactly
// ("64MiB", "512MB", "1023"), so that ParseSize reads it back to the same
// size.
func (z Size) String() string {
	if z != 0 {
		for _, u := range sizeUnits {
			if z%u.bytes == 0 {
				return strconv.FormatInt(int64(z/u.bytes), 10) + u.suffix
			}
		}
	}
	return strconv.FormatInt(int64(z), 10)
}

// MarshalText writes the size as String does.
func (z Size) MarshalText() ([]byte, error) { return []byte(z.String()), nil }

// UnmarshalText parses the size as ParseSize does.
func (z *Size) UnmarshalText(text []byte) error {
	v, err := ParseSize(string(text))
	if err != nil {
		return err
	}
	*z = v
	return nil
}
