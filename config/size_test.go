package config

import (
	"strings"
	"testing"
)

func TestParseSize(t *testing.T) {
	good := []struct {
		in   string
		want Size
	}{
		{"64MiB", 64 << 20},
		{"1GiB", 1 << 30},
		{"512MB", 512_000_000},
		{"1048576", 1 << 20},
		{"4KB", 4000},
		{"2kib", 2048},
		{" 16 MiB ", 16 << 20},
		{"100B", 100},
		{"0", 0},
	}
	for _, c := range good {
		t.Run(c.in, func(t *testing.T) {
			got, err := ParseSize(c.in)
			if err != nil || got != c.want {
				t.Errorf("ParseSize(%q) = %d, %v; want %d", c.in, got, err, c.want)
			}
		})
	}
	bad := []struct{ in, want string }{
		{"64XB", `"64XB" is not a size (use bytes or a suffix KiB, MiB, GiB, KB, MB, GB)`},
		{"", `"" is not a size`},
		{"MiB", `"MiB" is not a size`},
		{"-1", `"-1" is not a size`},
		{"1.5GiB", `"1.5GiB" is not a size`},
		{"64 MiB extra", `is not a size`},
		{"99999999999999GiB", `too large`},
		{"99999999999999999999", `too large`},
	}
	for _, c := range bad {
		t.Run("bad/"+c.in, func(t *testing.T) {
			_, err := ParseSize(c.in)
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Errorf("ParseSize(%q) error = %v, want it to contain %q", c.in, err, c.want)
			}
		})
	}
}

func TestSize_String(t *testing.T) {
	cases := []struct {
		in   Size
		want string
	}{
		{64 * MiB, "64MiB"},
		{GiB, "1GiB"},
		{512 * MB, "512MB"},
		{1536 * KiB, "1536KiB"},
		{1000, "1KB"},
		{1023, "1023"},
		{0, "0"},
	}
	for _, c := range cases {
		t.Run(c.want, func(t *testing.T) {
			if got := c.in.String(); got != c.want {
				t.Errorf("Size(%d).String() = %q, want %q", int64(c.in), got, c.want)
			}
			back, err := ParseSize(c.in.String())
			if err != nil || back != c.in {
				t.Errorf("ParseSize(%q) = %d, %v; want %d", c.in.String(), back, err, int64(c.in))
			}
		})
	}
}

func TestSize_UnmarshalText(t *testing.T) {
	t.Run("good", func(t *testing.T) {
		var z Size
		if err := z.UnmarshalText([]byte("2GiB")); err != nil || z != 2*GiB {
			t.Errorf("UnmarshalText(2GiB) = %v, %v", z, err)
		}
		if text, _ := z.MarshalText(); string(text) != "2GiB" {
			t.Errorf("MarshalText = %q, want 2GiB", text)
		}
	})
	t.Run("bad", func(t *testing.T) {
		z := Size(7)
		if err := z.UnmarshalText([]byte("lots")); err == nil || z != 7 {
			t.Errorf("UnmarshalText(lots) = %v, %v; want an error and no change", z, err)
		}
	})
}
