package config

import (
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/pflag"
	"github.com/spf13/viper"
)

// DefaultFile is the config file Load reads from the current directory
// when no file is named. It may be absent.
const DefaultFile = "c4book.yaml"

// Source says where Load finds the configuration besides the defaults and
// the C4BOOK_* environment variables.
type Source struct {
	// File is the config file to read; it must exist. If empty, Load reads
	// DefaultFile in Dir if it exists. A file named *.yaml, *.yml, *.json
	// or *.toml is read in that format, any other as YAML.
	File string

	// Dir is the directory searched for DefaultFile when File is empty.
	// Empty means the current directory.
	Dir string

	// Flags maps keys to the command-line flags of the running command
	// that set them. A flag overrides every other source, but only when
	// it was given on the command line: its default is ignored.
	Flags map[string]*pflag.Flag

	// OtherEnv names C4BOOK_* variables the caller reads itself, which
	// Load then leaves alone as it does the variables of the tests and
	// scripts (see checkEnv): those of a build's optional parts, which
	// the other builds refuse as misspelt keys.
	OtherEnv []string
}

// Load returns the configuration made of, from lowest to highest
// priority: the defaults, the config file, the C4BOOK_* environment
// variables (an empty variable counts as unset) and the flags set on the
// command line. It returns an error if a C4BOOK_* variable is not a key's
// (see checkEnv), if the file cannot be read or parsed, holds a key that
// is not a configuration key, or if a value is malformed
// or invalid (see Validate); a bad value's error names the key, the value,
// what is allowed and where the value came from. Each bad value is an
// *Error, joined with errors.Join.
//
// Each call uses its own viper instance, so the flags bound are exactly
// those of src: nothing is shared between commands or calls.
func Load(src Source) (Config, error) {
	if err := checkEnv(os.Environ(), src.OtherEnv); err != nil {
		return Config{}, err
	}
	l := &loader{v: viper.New(), flags: src.Flags}
	def := Default()
	for _, k := range keys {
		l.v.SetDefault(k.name, reflectValue(k.field(&def)))
		if err := l.v.BindEnv(k.name, EnvVar(k.name)); err != nil {
			return Config{}, err
		}
	}
	if err := l.readFile(src); err != nil {
		return Config{}, err
	}
	for name, f := range src.Flags {
		if !isKey(name) {
			return Config{}, fmt.Errorf("flag --%s is bound to %q, which is not a configuration key", f.Name, name)
		}
		if err := l.v.BindPFlag(name, f); err != nil {
			return Config{}, err
		}
	}

	var cfg Config
	var errs []error
	for _, k := range keys {
		if err := decodeValue(l.v.Get(k.name), k.field(&cfg)); err != nil {
			errs = append(errs, &Error{Key: k.name, Msg: err.Error(), Source: l.source(k.name)})
		}
	}
	if len(errs) == 0 {
		if err := cfg.Validate(); err != nil {
			errs = l.withSources(err)
		}
	}
	cfg.Book.PathGiven = l.source("book.path") != ""
	if len(errs) > 0 {
		return Config{}, errors.Join(errs...)
	}
	return cfg, nil
}

// loader is the state of one Load.
type loader struct {
	v     *viper.Viper
	file  string // config file read, or ""
	flags map[string]*pflag.Flag
}

// readFile reads the config file src names, or DefaultFile if it exists,
// and checks it holds only configuration keys.
func (l *loader) readFile(src Source) error {
	file := src.File
	if file == "" {
		file = filepath.Join(src.Dir, DefaultFile)
		if _, err := os.Stat(file); errors.Is(err, os.ErrNotExist) {
			return nil
		}
	}
	l.file = file
	l.v.SetConfigFile(file)
	if ext := strings.TrimPrefix(filepath.Ext(file), "."); !slices.Contains([]string{"yaml", "yml", "json", "toml"}, ext) {
		l.v.SetConfigType("yaml")
	}
	if err := l.v.ReadInConfig(); err != nil {
		var perr viper.ConfigParseError
		if errors.As(err, &perr) {
			return fmt.Errorf("config file %s: malformed: %w", file, errors.Unwrap(perr))
		}
		return fmt.Errorf("config file %s: %w", file, err)
	}
	var errs []error
	all := l.v.AllKeys()
	slices.Sort(all)
	for _, k := range all {
		if isKey(k) {
			continue
		}
		if section := keysUnder(k); len(section) > 0 {
			errs = append(errs, fmt.Errorf("config file %s: %q is a section, not a value (its keys: %s)", file, k, strings.Join(section, ", ")))
			continue
		}
		errs = append(errs, fmt.Errorf("config file %s: unknown key %q%s", file, k, suggest(k)))
	}
	return errors.Join(errs...)
}

// source says where the value of key came from, as Load's priorities
// decide.
func (l *loader) source(key string) string {
	if f := l.flags[key]; f != nil && f.Changed {
		return "flag --" + f.Name
	}
	if env := EnvVar(key); os.Getenv(env) != "" {
		return "environment variable " + env
	}
	if l.file != "" && l.v.InConfig(key) {
		return "config file " + l.file
	}
	return ""
}

// withSources splits a joined Validate error and adds the source of each
// key's value.
func (l *loader) withSources(err error) []error {
	var errs []error
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		errs = j.Unwrap()
	} else {
		errs = []error{err}
	}
	for _, e := range errs {
		if ke, ok := e.(*Error); ok {
			ke.Source = l.source(ke.Key)
		}
	}
	return errs
}

// isKey reports whether name is a configuration key.
func isKey(name string) bool {
	return slices.ContainsFunc(keys, func(k key) bool { return k.name == name })
}

// keysUnder returns the keys of section name ("nats.tls").
func keysUnder(name string) []string {
	var under []string
	for _, k := range keys {
		if strings.HasPrefix(k.name, name+".") {
			under = append(under, k.name)
		}
	}
	return under
}

// suggest returns ` (did you mean "KEY"?)` for the key nearest to name, or
// "" when no key is near.
func suggest(name string) string {
	best, bestDist := "", 4 // at most 3 edits
	for _, k := range keys {
		if d := editDistance(name, k.name); d < bestDist {
			best, bestDist = k.name, d
		}
	}
	if best == "" {
		return ""
	}
	return fmt.Sprintf(" (did you mean %q?)", best)
}

// editDistance is the Levenshtein distance between a and b.
func editDistance(a, b string) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}

// reflectValue returns the value a field pointer points to.
func reflectValue(field any) any {
	switch f := field.(type) {
	case *int:
		return *f
	case *string:
		return *f
	case *Size:
		return *f
	case *time.Duration:
		return *f
	case *float64:
		return *f
	}
	panic(fmt.Sprintf("config: unsupported field type %T", field))
}

// decodeValue converts raw, a value as viper returns it (from a default,
// a file, the environment or a flag), into the field it points to. The
// error says what is wrong with the value, without the key.
func decodeValue(raw any, field any) error {
	switch f := field.(type) {
	case *int:
		n, err := toInt(raw)
		if err != nil {
			return err
		}
		*f = n
	case *string:
		switch r := raw.(type) {
		case string:
			*f = r
		case int, int64, uint64, float64, bool:
			*f = fmt.Sprint(r)
		default:
			return fmt.Errorf("%s is not a string", describe(raw))
		}
	case *Size:
		switch r := raw.(type) {
		case Size:
			*f = r
		case string:
			z, err := ParseSize(r)
			if err != nil {
				return err
			}
			*f = z
		default:
			n, err := toInt(raw)
			if err != nil || n < 0 {
				return fmt.Errorf("%s is not a size (%s)", describe(raw), errSizeSyntax)
			}
			*f = Size(n)
		}
	case *time.Duration:
		switch r := raw.(type) {
		case time.Duration:
			*f = r
		case string:
			d, err := time.ParseDuration(strings.TrimSpace(r))
			if err != nil {
				return fmt.Errorf("%q is not a duration (write a number and a unit: 500ms, 30s, 2m, 1h)", r)
			}
			*f = d
		default:
			return fmt.Errorf("%s is not a duration (write a number and a unit: 500ms, 30s, 2m, 1h)", describe(raw))
		}
	case *float64:
		switch r := raw.(type) {
		case float64:
			*f = r
		case int, int64, uint64:
			n, _ := toInt(r)
			*f = float64(n)
		case string:
			x, err := strconv.ParseFloat(strings.TrimSpace(r), 64)
			if err != nil {
				return fmt.Errorf("%q is not a number", r)
			}
			*f = x
		default:
			return fmt.Errorf("%s is not a number", describe(raw))
		}
	default:
		panic(fmt.Sprintf("config: unsupported field type %T", field))
	}
	return nil
}

// toInt converts an integer written in a file, the environment or a flag.
func toInt(raw any) (int, error) {
	switch r := raw.(type) {
	case int:
		return r, nil
	case int64:
		if r >= math.MinInt && r <= math.MaxInt {
			return int(r), nil
		}
	case uint64:
		if r <= math.MaxInt {
			return int(r), nil
		}
	case float64:
		if r == math.Trunc(r) && math.Abs(r) < 1<<53 {
			return int(r), nil
		}
	case string:
		if n, err := strconv.Atoi(strings.TrimSpace(r)); err == nil {
			return n, nil
		}
	}
	return 0, fmt.Errorf("%s is not an integer", describe(raw))
}

// describe writes a raw value for an error message: strings quoted,
// lists and sections named as such.
func describe(raw any) string {
	switch r := raw.(type) {
	case string:
		return strconv.Quote(r)
	case []any:
		return "a list"
	case map[string]any:
		return "a section"
	case nil:
		return "an empty value"
	}
	return fmt.Sprint(raw)
}
