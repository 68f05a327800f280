package conf

import (
	"reflect"
	"strings"
	"testing"

	"github.com/BurntSushi/toml"
)

// TestFullDocumentsEveryKey: testdata/full.toml documents every key (the README and the package
// say so): each toml key of Config, at any depth, is set in it. The naming key was missing.
func TestFullDocumentsEveryKey(t *testing.T) {
	var v map[string]any
	md, err := toml.DecodeFile("testdata/full.toml", &v)
	if err != nil {
		t.Fatal(err)
	}
	set := map[string]bool{}
	for _, k := range md.Keys() {
		set[k[len(k)-1]] = true
	}
	for _, key := range tomlKeys(reflect.TypeFor[Config](), nil) {
		if !set[key] {
			t.Errorf("key %q is not in testdata/full.toml", key)
		}
	}
}

// tomlKeys appends the toml keys of struct type st and of the structs it holds (embedded,
// fields, map and slice elements) to keys.
func tomlKeys(st reflect.Type, keys []string) []string {
	for i := range st.NumField() {
		f := st.Field(i)
		ft := f.Type
		for ft.Kind() == reflect.Map || ft.Kind() == reflect.Slice || ft.Kind() == reflect.Pointer {
			ft = ft.Elem()
		}
		name, _, _ := strings.Cut(f.Tag.Get("toml"), ",")
		if name == "-" || !f.IsExported() {
			continue
		}
		if name != "" {
			keys = append(keys, name)
		}
		if ft.Kind() == reflect.Struct && ft.PkgPath() == st.PkgPath() {
			keys = tomlKeys(ft, keys)
		}
	}
	return keys
}
