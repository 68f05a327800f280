package conf

import (
	"errors"
	"fmt"
	"os"
	"reflect"
	"strconv"
	"strings"

	"github.com/BurntSushi/toml"
)

// Load reads the TOML file at path and returns Default() overlaid with it, validated. Errors name
// the file and the offending key: an unknown key, a value of the wrong type, a duration without a
// unit, or a value Validate rejects.
func Load(path string) (Config, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return Config{}, fmt.Errorf("conf: %w", err)
	}
	c, err := Parse(data)
	if err != nil {
		return Config{}, fmt.Errorf("%s: %w", path, err)
	}
	return c, nil
}

// Parse is Load for a configuration already in memory.
func Parse(data []byte) (Config, error) {
	c := Default()
	md, err := toml.Decode(string(data), &c)
	if err != nil {
		var pe toml.ParseError
		if errors.As(err, &pe) && IsSecretKey(pe.LastKey) {
			// The parser's message quotes what it found: here, a credential.
			return Config{}, fmt.Errorf("conf: line %d: %s: the value is not valid TOML (quote it); not shown: a secret",
				pe.Position.Line, pe.LastKey)
		}
		if strings.Contains(err.Error(), `(last key "server.adapter"): incompatible types`) {
			// The decoder's own words (a map where a slice goes) do not say what to write.
			return Config{}, fmt.Errorf("conf: server.adapter is a list of tables: write [[server.adapter]], one for each adapter (%w)", err)
		}
		if errors.As(err, &pe) && unitless(err) {
			return Config{}, fmt.Errorf("conf: %s: a duration is a string with a unit, e.g. \"3s\" or \"1500ms\" (%w)", pe.LastKey, err)
		}
		return Config{}, fmt.Errorf("conf: %w", err)
	}
	if err := checkKeys(md); err != nil {
		return Config{}, err
	}
	if err := c.Validate(); err != nil {
		return Config{}, err
	}
	return c, nil
}

// durationKeys are the last components of the keys that hold a time.Duration, wherever they
// appear.
var durationKeys = map[string]bool{
	"sync-invoke-timeout":       true,
	"async-invoke-timeout":      true,
	"connect-timeout":           true,
	"timeout-check-interval":    true,
	"refresh-endpoint-interval": true,
	"keep-alive-interval":       true,
	"check-timeout-interval":    true,
	"min-frequent-fail-time":    true,
	"try-interval":              true,
	"report-interval":           true,
	"backup-request":            true,
	"handshake-timeout":         true,
}

// checkKeys rejects keys the configuration does not have and durations written as bare integers.
// The toml package decodes an integer into a time.Duration as nanoseconds, so a TARS-style
// "sync-invoke-timeout = 3000" (milliseconds in TARS) would silently become 3µs.
func checkKeys(md toml.MetaData) error {
	var errs []error
	named := make(map[string]bool) // servants named without quotes, said once each
	for _, k := range md.Undecoded() {
		if name, ok := unquotedServant(md, k); ok {
			if !named[name] {
				named[name] = true
				errs = append(errs, fmt.Errorf("conf: unknown key %s: a servant's name has dots, which TOML reads as nested tables: quote it, [servant.%q]", k, name))
			}
			continue
		}
		if near := nearestKey(reflect.TypeFor[Config](), k); near != "" {
			errs = append(errs, fmt.Errorf("conf: unknown key %s (did you mean %s?)", k, near))
			continue
		}
		errs = append(errs, fmt.Errorf("conf: unknown key %s", k))
	}
	for _, k := range md.Keys() {
		if want, ok := spelled(reflect.TypeFor[Config](), k); !ok {
			// The toml package matches a key to a field whatever its case: a key spelled
			// otherwise would pass unchecked (a bare-number duration read as nanoseconds).
			errs = append(errs, fmt.Errorf("conf: key %s: keys are spelled as documented: %s", k, want))
		}
	}
	for _, k := range md.Keys() {
		if durationKeys[k[len(k)-1]] && md.Type(k...) == "Integer" {
			errs = append(errs, fmt.Errorf("conf: %s: a duration is a string with a unit, e.g. \"3s\" or \"1500ms\"", k))
		}
	}
	return errors.Join(errs...)
}

// spelled reports whether every part of key that names a field of t (not a map's key, such as a
// servant's name) is spelled as the field's toml tag, and if not, that part as it should be.
func spelled(t reflect.Type, key toml.Key) (string, bool) {
	for _, part := range key {
		for t.Kind() == reflect.Pointer || t.Kind() == reflect.Slice {
			t = t.Elem()
		}
		switch t.Kind() {
		case reflect.Map:
			t = t.Elem() // part is a key of the map: any spelling
			continue
		case reflect.Struct:
		default:
			return "", true
		}
		found := false
		for i := range t.NumField() {
			f := t.Field(i)
			tag, _, _ := strings.Cut(f.Tag.Get("toml"), ",")
			if tag == "" || tag == "-" {
				continue
			}
			if tag == part {
				t, found = f.Type, true
				break
			}
			if strings.EqualFold(tag, part) {
				return tag, false
			}
		}
		if !found {
			return "", true // not a field: Undecoded reports it
		}
	}
	return "", true
}

// unitless reports whether err is the toml package's refusal of a duration written as a quoted
// number with no unit ("3000", TARS's milliseconds).
func unitless(err error) bool {
	_, v, ok := strings.Cut(err.Error(), `invalid duration: "`)
	if !ok {
		return false
	}
	v, _, _ = strings.Cut(v, `"`)
	_, perr := strconv.ParseFloat(v, 64)
	return perr == nil
}

// nearestKey returns the key of the table key names a key of (its parts but the last, walked
// through t as spelled walks them) nearest to key's last part, when one is near enough to be
// what was meant: within two edits, or three for a word sharing its first four letters
// (retry, retries). "" when none is, or key's table is not one of t's structs.
func nearestKey(t reflect.Type, key toml.Key) string {
	for _, part := range key[:len(key)-1] {
		for t.Kind() == reflect.Pointer || t.Kind() == reflect.Slice {
			t = t.Elem()
		}
		switch t.Kind() {
		case reflect.Map:
			t = t.Elem()
			continue
		case reflect.Struct:
			f, ok := fieldByTag(t, part)
			if !ok {
				return ""
			}
			t = f.Type
		default:
			return ""
		}
	}
	for t.Kind() == reflect.Pointer || t.Kind() == reflect.Slice || t.Kind() == reflect.Map {
		t = t.Elem()
	}
	if t.Kind() != reflect.Struct {
		return ""
	}
	last := key[len(key)-1]
	best, bestD := "", 0
	for i := range t.NumField() {
		tag, _, _ := strings.Cut(t.Field(i).Tag.Get("toml"), ",")
		if tag == "" || tag == "-" {
			continue
		}
		d := editDistance(last, tag)
		limit := 2
		if len(last) >= 4 && len(tag) >= 4 && last[:4] == tag[:4] {
			limit = 3
		}
		if d <= limit && (best == "" || d < bestD) {
			best, bestD = tag, d
		}
	}
	return best
}

// fieldByTag returns the field of struct t whose toml tag is name.
func fieldByTag(t reflect.Type, name string) (reflect.StructField, bool) {
	for i := range t.NumField() {
		if tag, _, _ := strings.Cut(t.Field(i).Tag.Get("toml"), ","); tag == name {
			return t.Field(i), true
		}
	}
	return reflect.StructField{}, false
}

// editDistance is the Levenshtein distance of a and b (bytes: keys are ASCII).
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

// quoteKey writes a table name the way a TOML file writes it when it holds dots or other
// characters a bare key cannot: servant."Hello.Server.GreeterObj".
func quoteKey(name string) string {
	for _, r := range name {
		if !(r >= 'A' && r <= 'Z' || r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r == '_' || r == '-') {
			return `"` + strings.NewReplacer(`\`, `\\`, `"`, `\"`).Replace(name) + `"`
		}
	}
	if name == "" {
		return `""`
	}
	return name
}

// IsSecretKey reports whether key (a configuration key, dotted or not) names a credential, whose
// value is never shown: it holds "secret" or "password", in any case.
func IsSecretKey(key string) bool {
	k := strings.ToLower(key)
	return strings.Contains(k, "secret") || strings.Contains(k, "password")
}

// unquotedServant reports whether k, a key the configuration does not have, is under a servant
// table whose name was written without quotes ([servant.A.B.C], which TOML reads as servant "A"
// holding a table "B" holding "C"), and returns the name as the table meant it ("A.B.C"): the
// parts after "servant" that name tables. A quoted name is one part, as is a name without dots
// with a misspelled key under it.
func unquotedServant(md toml.MetaData, k toml.Key) (string, bool) {
	if len(k) < 3 || k[0] != "servant" {
		return "", false
	}
	n := 1
	for n < len(k) {
		if t := md.Type(k[:n+1]...); t != "Hash" && t != "" { // "": a table named only on the way
			break
		}
		n++
	}
	if n < 3 { // servant and one name
		return "", false
	}
	return strings.Join(k[1:n], "."), true
}
