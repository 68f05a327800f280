package parser

import (
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/tarscomm/tarscomm/cmd/tars2tarscomm/internal/ast"
)

// resolve binds every named type and enumerator reference, and checks default values and
// constants against their types and map keys for comparability.
func (p *Program) resolve() error {
	for _, f := range p.Files {
		for _, m := range f.Modules {
			for _, s := range m.Structs {
				for _, fd := range s.Fields {
					if err := p.resolveType(m, fd.Type); err != nil {
						return err
					}
					if fd.Default != nil {
						if err := p.checkValue(m, fd.Type, fd.Default); err != nil {
							return err
						}
					}
				}
			}
			for _, c := range m.Consts {
				if err := p.resolveType(m, c.Type); err != nil {
					return err
				}
				switch c.Type.Kind {
				case ast.Vector, ast.Map:
					return fmt.Errorf("%s: const %s: a constant must be of a basic type or an enum", c.Pos, c.Name)
				case ast.Named:
					if c.Type.Struct != nil {
						return fmt.Errorf("%s: const %s: a constant cannot be a struct", c.Pos, c.Name)
					}
				}
				if err := p.checkValue(m, c.Type, c.Value); err != nil {
					return err
				}
			}
			for _, it := range m.Interfaces {
				for _, fn := range it.Funcs {
					if fn.Ret.Kind != ast.Void {
						if err := p.resolveType(m, fn.Ret); err != nil {
							return err
						}
					}
					for _, prm := range fn.Params {
						if err := p.resolveType(m, prm.Type); err != nil {
							return err
						}
					}
				}
			}
		}
	}
	// Struct keys of maps must be comparable in Go: no vectors or maps inside.
	for _, f := range p.Files {
		for _, m := range f.Modules {
			for _, s := range m.Structs {
				for _, fd := range s.Fields {
					if err := checkKeys(fd.Type); err != nil {
						return err
					}
				}
			}
			for _, it := range m.Interfaces {
				for _, fn := range it.Funcs {
					if fn.Ret.Kind != ast.Void {
						if err := checkKeys(fn.Ret); err != nil {
							return err
						}
					}
					for _, prm := range fn.Params {
						if err := checkKeys(prm.Type); err != nil {
							return err
						}
					}
				}
			}
		}
	}
	return checkCycles(p.Files)
}

// checkCycles refuses a struct that holds itself by value, directly or through other structs
// (A holds B, B holds A): it has no finite size, in Go as in C++. Through a vector or a map it
// may.
func checkCycles(files []*ast.File) error {
	var structs []*ast.Struct
	for _, f := range files {
		for _, m := range f.Modules {
			structs = append(structs, m.Structs...)
		}
	}
	held := func(s *ast.Struct) []*ast.Struct { // the structs s holds by value
		var out []*ast.Struct
		for _, fd := range s.Fields {
			if fd.Type.Kind == ast.Named && fd.Type.Struct != nil {
				out = append(out, fd.Type.Struct)
			}
		}
		return out
	}
	c := FindCycle(structs, held)
	if c == nil {
		return nil
	}
	names := make([]string, len(c))
	for i, s := range c {
		names[i] = s.Name
	}
	return fmt.Errorf("%s: struct %s holds itself by value (%s): a struct can hold itself only through a vector or a map",
		c[0].Pos, c[0].Name, strings.Join(names, " → "))
}

// FindCycle returns a cycle of the directed graph made of roots and the nodes next leads to, as
// its nodes from the first to the same again (A, B, A), or nil when there is none. Nodes are
// visited in the order roots and next give them, so one input gives one report. The generator
// uses it too (modules that use each other).
func FindCycle[N comparable](roots []N, next func(N) []N) []N {
	const visiting, done = 1, 2
	state := map[N]int{}
	var path []N
	var visit func(n N) []N
	visit = func(n N) []N {
		switch state[n] {
		case done:
			return nil
		case visiting:
			return append(slices.Clone(path[slices.Index(path, n):]), n)
		}
		state[n] = visiting
		path = append(path, n)
		for _, m := range next(n) {
			if c := visit(m); c != nil {
				return c
			}
		}
		path = path[:len(path)-1]
		state[n] = done
		return nil
	}
	for _, r := range roots {
		if c := visit(r); c != nil {
			return c
		}
	}
	return nil
}

// lookup finds name (as written in module m) among the declarations of table: relative to m
// and each enclosing module, then as an absolute name.
func lookup[T any](table map[string]T, m *ast.Module, name string) (T, bool) {
	name = strings.TrimPrefix(name, "::")
	for i := len(m.Path); i >= 0; i-- {
		full := strings.Join(append(append([]string{}, m.Path[:i]...), name), "::")
		if v, ok := table[full]; ok {
			return v, true
		}
	}
	var zero T
	return zero, false
}

func (p *Program) resolveType(m *ast.Module, t *ast.Type) error {
	switch t.Kind {
	case ast.Vector:
		return p.resolveType(m, t.Elem)
	case ast.Map:
		if err := p.resolveType(m, t.Key); err != nil {
			return err
		}
		return p.resolveType(m, t.Elem)
	case ast.Named:
		d, ok := lookup(p.types, m, t.Name)
		if !ok {
			return fmt.Errorf("%s: undefined type %s", t.Pos, t.Name)
		}
		switch d := d.(type) {
		case *ast.Struct:
			t.Struct = d
		case *ast.Enum:
			t.Enum = d
		}
	}
	return nil
}

// checkKeys refuses map keys that Go cannot compare: vectors, maps, and structs holding them.
func checkKeys(t *ast.Type) error {
	switch t.Kind {
	case ast.Vector:
		return checkKeys(t.Elem)
	case ast.Map:
		if !mapKeyable(t.Key, map[*ast.Struct]bool{}) {
			return fmt.Errorf("%s: map key type holds a vector or a map, which a Go map key cannot", t.Key.Pos)
		}
		if err := checkKeys(t.Key); err != nil {
			return err
		}
		return checkKeys(t.Elem)
	}
	return nil
}

// mapKeyable reports whether a Go value of type t can be a map key (holds no vector or map).
func mapKeyable(t *ast.Type, seen map[*ast.Struct]bool) bool {
	switch t.Kind {
	case ast.Vector, ast.Map:
		return false
	case ast.Named:
		if t.Struct == nil || seen[t.Struct] {
			return true
		}
		seen[t.Struct] = true
		for _, f := range t.Struct.Fields {
			if !mapKeyable(f.Type, seen) {
				return false
			}
		}
	}
	return true
}

// ranges of the integer kinds, signed and unsigned.
func intRange(t *ast.Type) (lo, hi int64) {
	switch t.Kind {
	case ast.Byte:
		if t.Unsigned {
			return 0, math.MaxUint8
		}
		return math.MinInt8, math.MaxInt8
	case ast.Short:
		if t.Unsigned {
			return 0, math.MaxUint16
		}
		return math.MinInt16, math.MaxInt16
	case ast.Int:
		if t.Unsigned {
			return 0, math.MaxUint32
		}
		return math.MinInt32, math.MaxInt32
	}
	return math.MinInt64, math.MaxInt64
}

// checkValue checks that v can initialize type t, resolving enumerator references.
func (p *Program) checkValue(m *ast.Module, t *ast.Type, v *ast.Value) error {
	bad := func() error {
		return fmt.Errorf("%s: value %s does not fit type %s", v.Pos, valueText(v), typeText(t))
	}
	switch t.Kind {
	case ast.Bool:
		if v.Kind != ast.BoolValue {
			return bad()
		}
	case ast.Byte, ast.Short, ast.Int, ast.Long:
		if v.Kind != ast.IntValue {
			return bad()
		}
		if lo, hi := intRange(t); v.Int < lo || v.Int > hi {
			return bad()
		}
	case ast.Float, ast.Double:
		if v.Kind == ast.IntValue {
			v.Kind, v.Float = ast.FloatValue, float64(v.Int)
		}
		if v.Kind != ast.FloatValue {
			return bad()
		}
		// A float is a float32 in Go (and C++): a value that rounds to no finite float32, as Go
		// rounds the constant, does not fit (3.4028235e38, FLT_MAX as printed, does).
		if t.Kind == ast.Float && math.IsInf(float64(float32(v.Float)), 0) {
			return bad()
		}
	case ast.String:
		if v.Kind != ast.StringValue {
			return bad()
		}
	case ast.Named:
		if t.Enum == nil {
			return fmt.Errorf("%s: a struct field of struct type cannot have a default value", v.Pos)
		}
		switch v.Kind {
		case ast.IntValue:
			for _, mem := range t.Enum.Members {
				// A value written unsigned is its 32 bits, as in the enum (parseEnum).
				if int64(mem.Value) == v.Int || v.Int > math.MaxInt32 && v.Int <= math.MaxUint32 && mem.Value == int32(uint32(v.Int)) {
					v.Kind, v.Enum, v.Member = ast.EnumValue, t.Enum, mem
					return nil
				}
			}
			return fmt.Errorf("%s: %d is not a value of enum %s", v.Pos, v.Int, t.Enum.Name)
		case ast.EnumValue:
			return p.resolveMember(m, t.Enum, v)
		}
		return bad()
	default:
		return fmt.Errorf("%s: a %s cannot have a default value", v.Pos, typeText(t))
	}
	return nil
}

// resolveMember binds v (an enumerator name: M, E::M, mod::E::M, or mod::M) to a member of e.
func (p *Program) resolveMember(m *ast.Module, e *ast.Enum, v *ast.Value) error {
	name := v.Ref
	last := name[strings.LastIndex(name, ":")+1:]
	for _, mem := range e.Members {
		if mem.Name != last {
			continue
		}
		if name == last {
			v.Enum, v.Member = e, mem
			return nil
		}
		qual := strings.TrimSuffix(strings.TrimSuffix(name, last), "::")
		if d, ok := lookup(p.types, m, qual); ok && d == e {
			v.Enum, v.Member = e, mem
			return nil
		}
		if mods, ok := lookup(p.Modules, m, qual); ok && len(mods) > 0 && mods[0].Name == e.Module.Name {
			v.Enum, v.Member = e, mem
			return nil
		}
	}
	return fmt.Errorf("%s: %s is not an enumerator of %s", v.Pos, name, e.Name)
}

func valueText(v *ast.Value) string {
	switch v.Kind {
	case ast.StringValue:
		return fmt.Sprintf("%q", v.Str)
	case ast.BoolValue:
		return fmt.Sprint(v.Bool)
	case ast.EnumValue:
		return v.Ref
	}
	return v.Str
}

func typeText(t *ast.Type) string {
	var s string
	switch t.Kind {
	case ast.Void:
		return "void"
	case ast.Bool:
		s = "bool"
	case ast.Byte:
		s = "byte"
	case ast.Short:
		s = "short"
	case ast.Int:
		s = "int"
	case ast.Long:
		s = "long"
	case ast.Float:
		return "float"
	case ast.Double:
		return "double"
	case ast.String:
		return "string"
	case ast.Vector:
		return "vector<" + typeText(t.Elem) + ">"
	case ast.Map:
		return "map<" + typeText(t.Key) + ", " + typeText(t.Elem) + ">"
	case ast.Named:
		return t.Name
	}
	if t.Unsigned {
		return "unsigned " + s
	}
	return s
}
