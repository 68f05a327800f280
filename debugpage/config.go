package debugpage

import (
	"fmt"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"time"
)

// Setting is one line of the configuration as the page shows it: the key as a configuration
// file names it (a struct field's toml tag, dotted below its table; an embedded struct's fields
// are its parent's) and its value, durations
// written as durations.
type Setting struct {
	Key   string `json:"key"`
	Value string `json:"value"`
}

// settings flattens cfg, a struct or a map with string keys (or a pointer to one, or an
// interface holding one), into its settings in field (or sorted key) order; nil for anything
// else, which the page then shows as JSON. Values of keys that look like secrets are masked.
func settings(cfg any) []Setting {
	v := deref(reflect.ValueOf(cfg))
	if v.Kind() != reflect.Struct && (v.Kind() != reflect.Map || v.Type().Key().Kind() != reflect.String) {
		return nil
	}
	var out []Setting
	flatten("", v, &out)
	return out
}

var durationType = reflect.TypeFor[time.Duration]()

// deref follows v's pointers and interfaces to what they hold (a nil one stays).
func deref(v reflect.Value) reflect.Value {
	for (v.Kind() == reflect.Pointer || v.Kind() == reflect.Interface) && !v.IsNil() {
		v = v.Elem()
	}
	return v
}

func flatten(prefix string, v reflect.Value, out *[]Setting) {
	v = deref(v) // a configuration held by pointer is shown, and masked, key by key too
	switch {
	case v.Type() == durationType:
		*out = append(*out, Setting{prefix, time.Duration(v.Int()).String()})
	case v.Kind() == reflect.Struct:
		t := v.Type()
		for i := range t.NumField() {
			f := t.Field(i)
			if !f.IsExported() {
				continue
			}
			name, _, _ := strings.Cut(f.Tag.Get("toml"), ",")
			if name == "-" {
				continue
			}
			if name == "" && f.Anonymous && f.Type.Kind() == reflect.Struct {
				flatten(prefix, v.Field(i), out) // an embedded table's keys are its parent's
				continue
			}
			if name == "" {
				name = f.Name
			}
			flatten(join(prefix, name), v.Field(i), out)
		}
	case v.Kind() == reflect.Map && v.Type().Key().Kind() == reflect.String:
		keys := v.MapKeys()
		slices.SortFunc(keys, func(a, b reflect.Value) int { return strings.Compare(a.String(), b.String()) })
		for _, k := range keys {
			flatten(join(prefix, tomlKey(k.String())), v.MapIndex(k), out)
		}
	case v.Kind() == reflect.Slice && v.Len() > 0 && deref(v.Index(0)).Kind() == reflect.Struct:
		for i := range v.Len() {
			flatten(fmt.Sprintf("%s[%d]", prefix, i), v.Index(i), out)
		}
	default:
		val := fmt.Sprint(v.Interface())
		if v.Kind() == reflect.String {
			val = fmt.Sprintf("%q", val)
		}
		if secret(prefix) && !v.IsZero() {
			val = "(set, not shown)"
		}
		*out = append(*out, Setting{prefix, val})
	}
}

func join(prefix, name string) string {
	if prefix == "" {
		return name
	}
	return prefix + "." + name
}

// tomlKey writes a map's key as a TOML file names it: bare when it can be, quoted otherwise (a
// servant's name has dots: servant."Hello.Server.GreeterObj".sync-invoke-timeout, not a key four
// tables deep).
func tomlKey(k string) string {
	bare := k != ""
	for _, r := range k {
		if !(r >= 'A' && r <= 'Z' || r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r == '_' || r == '-') {
			bare = false
			break
		}
	}
	if bare {
		return k
	}
	return strconv.Quote(k)
}

func secret(key string) bool {
	k := strings.ToLower(key)
	return strings.Contains(k, "secret") || strings.Contains(k, "password")
}
