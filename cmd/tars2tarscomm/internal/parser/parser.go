// Package parser reads TARS IDL (.tars) files into the syntax tree of package ast: the lexer,
// the recursive-descent parser, #include resolution and the resolution of type and value
// names across modules and files. Every error names file:line:column.
package parser

import (
	"cmp"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/tarscomm/tarscomm/cmd/tars2tarscomm/internal/ast"
)

// Program is a set of parsed files with their includes and the names they declare.
type Program struct {
	Files   []*ast.File // every file, each once, includes before the files that include them
	Modules map[string][]*ast.Module
	types   map[string]any // "A::B::T" -> *ast.Struct or *ast.Enum
	consts  map[string]*ast.Const
	byPath  map[string]*ast.File
	inc     []string
	loading map[string]bool
}

// Load parses the files at paths and everything they include. An #include "x.tars" is looked
// up beside the including file, then in each of includeDirs.
func Load(paths []string, includeDirs []string) (*Program, error) {
	p := newProgram(includeDirs)
	for _, path := range paths {
		src, err := os.ReadFile(path)
		if err != nil {
			return nil, err
		}
		if _, err := p.add(path, string(src)); err != nil {
			return nil, err
		}
	}
	if err := p.resolve(); err != nil {
		return nil, err
	}
	return p, nil
}

// LoadSource parses one file from memory (includes are still read from disk); for tests.
func LoadSource(path, src string, includeDirs []string) (*Program, error) {
	p := newProgram(includeDirs)
	if _, err := p.add(path, src); err != nil {
		return nil, err
	}
	if err := p.resolve(); err != nil {
		return nil, err
	}
	return p, nil
}

func newProgram(includeDirs []string) *Program {
	return &Program{
		Modules: map[string][]*ast.Module{},
		types:   map[string]any{},
		consts:  map[string]*ast.Const{},
		byPath:  map[string]*ast.File{},
		inc:     includeDirs,
		loading: map[string]bool{},
	}
}

func (p *Program) add(path, src string) (*ast.File, error) {
	key := filepath.Clean(path)
	if abs, err := filepath.Abs(key); err == nil {
		key = abs // one file however its path is spelled (-I ../x, /abs/x)
	}
	if f := p.byPath[key]; f != nil {
		return f, nil
	}
	if p.loading[key] {
		return nil, errIncludeCycle
	}
	p.loading[key] = true
	defer delete(p.loading, key)
	toks, trail, err := lex(path, src)
	if err != nil {
		return nil, err
	}
	ps := &parser{prog: p, toks: toks, trail: trail, file: &ast.File{Path: path}}
	if err := ps.parseFile(); err != nil {
		return nil, err
	}
	p.byPath[key] = ps.file
	p.Files = append(p.Files, ps.file)
	return ps.file, nil
}

// errIncludeCycle is add's error for a file that includes itself, through others or not;
// include names where.
var errIncludeCycle = errors.New("#include cycle: the file is being read already (it includes itself through others)")

// include parses the file named by an #include in from: an absolute path as written, another
// beside from or in the include directories, in that order; then, when the name has directories
// and was not found so, its base name in the include directories and beside from (from itself
// excepted). TARS code
// bases include by the path a file had where it was written (a TARS installation's published
// protocols, "/home/tarsproto/App/Server/X.tars", or "../../Common/X.tars" in the original
// repository), and a user passes the directory that holds it here with -I, as tars2go finds
// such a file by its base name in its -include directories.
func (p *Program) include(from string, name string, pos ast.Pos) (*ast.File, error) {
	dirs := append([]string{filepath.Dir(from)}, p.inc...)
	tries := make([]string, 0, 2*len(dirs))
	if filepath.IsAbs(name) {
		tries = append(tries, name)
	} else {
		for _, d := range dirs {
			tries = append(tries, filepath.Join(d, name))
		}
	}
	if base := filepath.Base(name); base != name {
		// The include directories first, where the user put the file (tars2go looks there),
		// then beside from; never from itself, which a file does not mean to include.
		for _, d := range append(p.inc[:len(p.inc):len(p.inc)], filepath.Dir(from)) {
			if path := filepath.Join(d, base); path != filepath.Clean(from) {
				tries = append(tries, path)
			}
		}
	}
	for _, path := range tries {
		src, err := os.ReadFile(path)
		if err != nil {
			continue
		}
		f, err := p.add(path, string(src))
		if errors.Is(err, errIncludeCycle) {
			err = fmt.Errorf("%s: #include %q: %w", pos, name, err)
		}
		return f, err
	}
	return nil, fmt.Errorf("%s: #include %q: file not found beside %s or in the include directories, as written or by its base name", pos, name, from)
}

type parser struct {
	prog  *Program
	toks  []token
	trail map[int][]string
	i     int
	file  *ast.File
}

func (ps *parser) tok() token { return ps.toks[ps.i] }

func (ps *parser) errorf(pos ast.Pos, format string, args ...any) error {
	return fmt.Errorf("%s: %s", pos, fmt.Sprintf(format, args...))
}

func describe(t token) string {
	switch t.kind {
	case tEOF:
		return "end of file"
	case tString:
		return strconv.Quote(t.text)
	}
	return fmt.Sprintf("%q", t.text)
}

// is reports whether the current token is the punctuation or keyword s.
func (ps *parser) is(s string) bool {
	t := ps.tok()
	return (t.kind == tPunct || t.kind == tIdent) && t.text == s
}

func (ps *parser) expect(s string) (token, error) {
	t := ps.tok()
	if !ps.is(s) {
		return t, ps.errorf(t.pos, "expected %q, found %s", s, describe(t))
	}
	ps.i++
	return t, nil
}

// keywords may not name declarations.
var keywords = map[string]bool{
	"module": true, "struct": true, "interface": true, "enum": true, "const": true,
	"require": true, "optional": true, "out": true, "routekey": true, "void": true,
	"bool": true, "byte": true, "short": true, "int": true, "long": true, "float": true,
	"double": true, "string": true, "vector": true, "map": true, "unsigned": true,
	"true": true, "false": true,
}

func (ps *parser) ident(what string) (token, error) {
	t := ps.tok()
	if t.kind != tIdent || keywords[t.text] {
		return t, ps.errorf(t.pos, "expected %s name, found %s", what, describe(t))
	}
	ps.i++
	return t, nil
}

// semi consumes a ';' and returns the comments that follow it on its line.
func (ps *parser) semi() ([]string, error) {
	if _, err := ps.expect(";"); err != nil {
		return nil, err
	}
	return ps.trail[ps.i-1], nil
}

func (ps *parser) parseFile() error {
	for {
		t := ps.tok()
		switch {
		case t.kind == tEOF:
			return nil
		case t.kind == tInclude:
			ps.i++
			name := ps.tok()
			if name.kind != tString {
				return ps.errorf(name.pos, "#include: expected a quoted file name, found %s", describe(name))
			}
			ps.i++
			f, err := ps.prog.include(ps.file.Path, name.text, name.pos)
			if err != nil {
				return err
			}
			ps.file.Includes = append(ps.file.Includes, f)
		case ps.is("module"):
			if err := ps.parseModule(nil); err != nil {
				return err
			}
		default:
			return ps.errorf(t.pos, "expected #include or module, found %s", describe(t))
		}
	}
}

func (ps *parser) parseModule(parent *ast.Module) error {
	kw := ps.tok()
	ps.i++
	var path []string
	if parent != nil {
		path = append(path, parent.Path...)
	}
	for {
		name, err := ps.ident("module")
		if err != nil {
			return err
		}
		path = append(path, name.text)
		if !ps.is("::") {
			break
		}
		ps.i++
	}
	m := &ast.Module{Pos: kw.pos, Name: strings.Join(path, "::"), Path: path, File: ps.file, Doc: kw.lead}
	ps.file.Modules = append(ps.file.Modules, m)
	ps.prog.Modules[m.Name] = append(ps.prog.Modules[m.Name], m)
	if _, err := ps.expect("{"); err != nil {
		return err
	}
	for !ps.is("}") {
		t := ps.tok()
		var err error
		switch {
		case t.kind == tEOF:
			return ps.errorf(t.pos, "module %s: missing '}'", m.Name)
		case ps.is("module"):
			err = ps.parseModule(m)
		case ps.is("struct"):
			err = ps.parseStruct(m)
		case ps.is("enum"):
			err = ps.parseEnum(m)
		case ps.is("const"):
			err = ps.parseConst(m)
		case ps.is("interface"):
			err = ps.parseInterface(m)
		case ps.is("key"):
			err = ps.parseKey(m)
		default:
			err = ps.errorf(t.pos, "expected struct, enum, const, interface, key or module, found %s", describe(t))
		}
		if err != nil {
			return err
		}
	}
	ps.i++
	if ps.is(";") {
		ps.i++
	}
	return nil
}

func (ps *parser) declare(m *ast.Module, name token, decl any) error {
	full := m.Name + "::" + name.text
	if prev, dup := ps.prog.types[full]; dup {
		return ps.errorf(name.pos, "%s redeclared (first declared at %s)", full, declPos(prev))
	}
	if prev, dup := ps.prog.consts[full]; dup {
		return ps.errorf(name.pos, "%s redeclared (first declared at %s)", full, prev.Pos)
	}
	switch d := decl.(type) {
	case *ast.Const:
		ps.prog.consts[full] = d
	default:
		ps.prog.types[full] = decl
	}
	return nil
}

func declPos(d any) ast.Pos {
	switch d := d.(type) {
	case *ast.Struct:
		return d.Pos
	case *ast.Enum:
		return d.Pos
	}
	return ast.Pos{}
}

func (ps *parser) parseStruct(m *ast.Module) error {
	kw := ps.tok()
	ps.i++
	name, err := ps.ident("struct")
	if err != nil {
		return err
	}
	s := &ast.Struct{Pos: name.pos, Name: name.text, Module: m, Doc: kw.lead}
	if err := ps.declare(m, name, s); err != nil {
		return err
	}
	if _, err := ps.expect("{"); err != nil {
		return err
	}
	tags := map[int]*ast.Field{}
	names := map[string]*ast.Field{}
	for !ps.is("}") {
		t := ps.tok()
		if t.kind != tInt {
			return ps.errorf(t.pos, "struct %s: expected a field tag or '}', found %s", s.Name, describe(t))
		}
		tag, err := strconv.ParseInt(t.text, 0, 64)
		if err != nil || tag < 0 || tag > 255 {
			return ps.errorf(t.pos, "struct %s: tag %s out of range 0..255", s.Name, t.text)
		}
		ps.i++
		f := &ast.Field{Pos: t.pos, Tag: int(tag), Doc: t.lead}
		switch {
		case ps.is("require"):
			f.Required = true
		case ps.is("optional"):
		default:
			return ps.errorf(ps.tok().pos, "struct %s: expected require or optional, found %s", s.Name, describe(ps.tok()))
		}
		ps.i++
		if f.Type, err = ps.parseType(); err != nil {
			return err
		}
		fname, err := ps.ident("field")
		if err != nil {
			return err
		}
		f.Name = fname.text
		if ps.is("=") {
			ps.i++
			if f.Default, err = ps.parseValue(); err != nil {
				return err
			}
		}
		trail, err := ps.semi()
		if err != nil {
			return err
		}
		f.Doc = append(f.Doc, trail...)
		if prev := tags[f.Tag]; prev != nil {
			return ps.errorf(f.Pos, "struct %s: tag %d of %s already used by %s", s.Name, f.Tag, f.Name, prev.Name)
		}
		if prev := names[f.Name]; prev != nil {
			return ps.errorf(fname.pos, "struct %s: field %s declared twice", s.Name, f.Name)
		}
		tags[f.Tag], names[f.Name] = f, f
		// In tag order, whatever the order written: the wire's order, and the fields' in the
		// generated struct, as tars2go and tars2cpp sort them.
		i, _ := slices.BinarySearchFunc(s.Fields, f.Tag, func(g *ast.Field, tag int) int { return cmp.Compare(g.Tag, tag) })
		s.Fields = slices.Insert(s.Fields, i, f)
	}
	ps.i++
	_, err = ps.semi()
	m.Structs = append(m.Structs, s)
	return err
}

// builtin types by keyword.
var builtin = map[string]ast.Kind{
	"bool": ast.Bool, "byte": ast.Byte, "short": ast.Short, "int": ast.Int, "long": ast.Long,
	"float": ast.Float, "double": ast.Double, "string": ast.String,
}

func (ps *parser) parseType() (*ast.Type, error) {
	t := ps.tok()
	typ := &ast.Type{Pos: t.pos}
	if ps.is("unsigned") {
		ps.i++
		u := ps.tok()
		switch {
		case ps.is("byte"):
			typ.Kind = ast.Byte
		case ps.is("short"):
			typ.Kind = ast.Short
		case ps.is("int"):
			typ.Kind = ast.Int
		default:
			return nil, ps.errorf(u.pos, "unsigned %s: only unsigned byte, short and int exist in TARS", describe(u))
		}
		typ.Unsigned = true
		ps.i++
		return typ, nil
	}
	if t.kind != tIdent {
		return nil, ps.errorf(t.pos, "expected a type, found %s", describe(t))
	}
	if k, ok := builtin[t.text]; ok {
		ps.i++
		typ.Kind = k
		return typ, nil
	}
	switch t.text {
	case "vector":
		ps.i++
		if _, err := ps.expect("<"); err != nil {
			return nil, err
		}
		elem, err := ps.parseType()
		if err != nil {
			return nil, err
		}
		if _, err := ps.expect(">"); err != nil {
			return nil, err
		}
		typ.Kind, typ.Elem = ast.Vector, elem
		return typ, nil
	case "map":
		ps.i++
		if _, err := ps.expect("<"); err != nil {
			return nil, err
		}
		key, err := ps.parseType()
		if err != nil {
			return nil, err
		}
		if _, err := ps.expect(","); err != nil {
			return nil, err
		}
		val, err := ps.parseType()
		if err != nil {
			return nil, err
		}
		if _, err := ps.expect(">"); err != nil {
			return nil, err
		}
		typ.Kind, typ.Key, typ.Elem = ast.Map, key, val
		return typ, nil
	case "void":
		return nil, ps.errorf(t.pos, "void is only a return type")
	}
	name, err := ps.qualName("type")
	if err != nil {
		return nil, err
	}
	typ.Kind, typ.Name = ast.Named, name
	return typ, nil
}

// qualName parses a name with optional :: qualifiers (a leading :: is allowed).
func (ps *parser) qualName(what string) (string, error) {
	var parts []string
	if ps.is("::") {
		ps.i++
		parts = append(parts, "")
	}
	for {
		t, err := ps.ident(what)
		if err != nil {
			return "", err
		}
		parts = append(parts, t.text)
		if !ps.is("::") {
			return strings.Join(parts, "::"), nil
		}
		ps.i++
	}
}

func (ps *parser) parseValue() (*ast.Value, error) {
	t := ps.tok()
	v := &ast.Value{Pos: t.pos}
	neg := false
	if ps.is("-") || ps.is("+") {
		neg = t.text == "-"
		ps.i++
		t = ps.tok()
		if t.kind != tInt && t.kind != tFloat {
			return nil, ps.errorf(t.pos, "expected a number after the sign, found %s", describe(t))
		}
	}
	switch t.kind {
	case tInt:
		text := t.text
		if neg {
			text = "-" + text
		}
		n, err := strconv.ParseInt(text, 0, 64)
		if err != nil {
			u, uerr := strconv.ParseUint(t.text, 0, 64)
			if uerr != nil || neg || u > math.MaxInt64 {
				return nil, ps.errorf(t.pos, "integer %s out of range", text)
			}
			n = int64(u)
		}
		v.Kind, v.Int, v.Str = ast.IntValue, n, text
	case tFloat:
		text := t.text
		if neg {
			text = "-" + text
		}
		f, err := strconv.ParseFloat(text, 64)
		if err != nil {
			return nil, ps.errorf(t.pos, "malformed number %s", text)
		}
		v.Kind, v.Float, v.Str = ast.FloatValue, f, text
	case tString:
		v.Kind, v.Str = ast.StringValue, t.text
	case tIdent:
		switch t.text {
		case "true", "false":
			v.Kind, v.Bool = ast.BoolValue, t.text == "true"
		default:
			name, err := ps.qualName("value")
			if err != nil {
				return nil, err
			}
			v.Kind, v.Ref = ast.EnumValue, name
			return v, nil
		}
	default:
		return nil, ps.errorf(t.pos, "expected a value, found %s", describe(t))
	}
	ps.i++
	return v, nil
}

func (ps *parser) parseEnum(m *ast.Module) error {
	kw := ps.tok()
	ps.i++
	name, err := ps.ident("enum")
	if err != nil {
		return err
	}
	e := &ast.Enum{Pos: name.pos, Name: name.text, Module: m, Doc: kw.lead}
	if err := ps.declare(m, name, e); err != nil {
		return err
	}
	if _, err := ps.expect("{"); err != nil {
		return err
	}
	next := int64(0)
	seen := map[string]*ast.EnumMember{}
	for !ps.is("}") {
		mt, err := ps.ident("enumerator")
		if err != nil {
			return err
		}
		mem := &ast.EnumMember{Pos: mt.pos, Name: mt.text, Doc: mt.lead}
		if seen[mem.Name] != nil {
			return ps.errorf(mt.pos, "enum %s: %s declared twice", e.Name, mem.Name)
		}
		if ps.is("=") {
			ps.i++
			v, err := ps.parseValue()
			if err != nil {
				return err
			}
			switch v.Kind {
			case ast.IntValue:
				next = v.Int
			case ast.EnumValue:
				ref := seen[v.Ref]
				if ref == nil {
					return ps.errorf(v.Pos, "enum %s: %s is not an earlier enumerator of %s", e.Name, v.Ref, e.Name)
				}
				next = int64(ref.Value)
			default:
				return ps.errorf(v.Pos, "enum %s: the value of %s must be an integer", e.Name, mem.Name)
			}
		}
		// An enum is an int32 on the wire: a value written unsigned (a bit-flag enum's
		// TOP = 0x80000000, ALL = 0xFFFFFFFF) is its 32 bits, as tars2cpp's (tars::Int32)e and
		// tars2go's int32 take it.
		if next < math.MinInt32 || next > math.MaxUint32 {
			return ps.errorf(mt.pos, "enum %s: value %d of %s does not fit 32 bits", e.Name, next, mem.Name)
		}
		mem.Value = int32(uint32(next))
		next = int64(mem.Value) + 1
		seen[mem.Name] = mem
		e.Members = append(e.Members, mem)
		if ps.is(",") {
			ps.i++
			mem.Doc = append(mem.Doc, ps.trail[ps.i-1]...)
			continue
		}
		mem.Doc = append(mem.Doc, ps.trail[ps.i-1]...)
		if !ps.is("}") {
			return ps.errorf(ps.tok().pos, "enum %s: expected ',' or '}', found %s", e.Name, describe(ps.tok()))
		}
	}
	ps.i++
	_, err = ps.semi()
	m.Enums = append(m.Enums, e)
	return err
}

func (ps *parser) parseConst(m *ast.Module) error {
	kw := ps.tok()
	ps.i++
	typ, err := ps.parseType()
	if err != nil {
		return err
	}
	name, err := ps.ident("constant")
	if err != nil {
		return err
	}
	if _, err := ps.expect("="); err != nil {
		return err
	}
	v, err := ps.parseValue()
	if err != nil {
		return err
	}
	c := &ast.Const{Pos: name.pos, Type: typ, Name: name.text, Value: v, Doc: kw.lead}
	trail, err := ps.semi()
	if err != nil {
		return err
	}
	c.Doc = append(c.Doc, trail...)
	if err := ps.declare(m, name, c); err != nil {
		return err
	}
	m.Consts = append(m.Consts, c)
	return nil
}

func (ps *parser) parseKey(m *ast.Module) error {
	ps.i++
	if _, err := ps.expect("["); err != nil {
		return err
	}
	name, err := ps.ident("struct")
	if err != nil {
		return err
	}
	var fields []token
	for ps.is(",") {
		ps.i++
		f, err := ps.ident("field")
		if err != nil {
			return err
		}
		fields = append(fields, f)
	}
	if _, err := ps.expect("]"); err != nil {
		return err
	}
	if _, err := ps.semi(); err != nil {
		return err
	}
	var s *ast.Struct
	for _, blk := range ps.prog.Modules[m.Name] { // this block and the module's earlier ones
		for _, cand := range blk.Structs {
			if cand.Name == name.text {
				s = cand
			}
		}
	}
	if s == nil {
		return ps.errorf(name.pos, "key[%s]: no struct %s declared before it in module %s", name.text, name.text, m.Name)
	}
	for _, f := range fields {
		found := false
		for _, sf := range s.Fields {
			found = found || sf.Name == f.text
		}
		if !found {
			return ps.errorf(f.pos, "key[%s]: struct %s has no field %s", name.text, name.text, f.text)
		}
		s.Key = append(s.Key, f.text)
	}
	return nil
}

func (ps *parser) parseInterface(m *ast.Module) error {
	kw := ps.tok()
	ps.i++
	name, err := ps.ident("interface")
	if err != nil {
		return err
	}
	it := &ast.Interface{Pos: name.pos, Name: name.text, Module: m, Doc: kw.lead}
	full := m.Name + "::" + name.text
	if prev, dup := ps.prog.types[full]; dup {
		return ps.errorf(name.pos, "%s redeclared (first declared at %s)", full, declPos(prev))
	}
	for _, other := range ps.prog.Modules[m.Name] {
		for _, o := range other.Interfaces {
			if o.Name == it.Name {
				return ps.errorf(name.pos, "interface %s redeclared (first declared at %s)", full, o.Pos)
			}
		}
	}
	if _, err := ps.expect("{"); err != nil {
		return err
	}
	funcs := map[string]*ast.Func{}
	for !ps.is("}") {
		t := ps.tok()
		if t.kind == tEOF {
			return ps.errorf(t.pos, "interface %s: missing '}'", it.Name)
		}
		f := &ast.Func{Pos: t.pos, Doc: t.lead}
		if ps.is("void") {
			ps.i++
			f.Ret = &ast.Type{Pos: t.pos, Kind: ast.Void}
		} else if f.Ret, err = ps.parseType(); err != nil {
			return err
		}
		fname, err := ps.ident("function")
		if err != nil {
			return err
		}
		f.Name, f.Pos = fname.text, fname.pos
		if prev := funcs[f.Name]; prev != nil {
			return ps.errorf(fname.pos, "interface %s: function %s declared twice (TARS has no overloading)", it.Name, f.Name)
		}
		funcs[f.Name] = f
		if _, err := ps.expect("("); err != nil {
			return err
		}
		pnames := map[string]bool{}
		for !ps.is(")") {
			if len(f.Params) > 0 {
				if _, err := ps.expect(","); err != nil {
					return err
				}
			}
			pt := ps.tok()
			if len(f.Params) == 255 { // a parameter is the field of its tag, 1..255 (0 is the return value)
				return ps.errorf(pt.pos, "function %s: more than 255 parameters (TARS tags are 0..255, the return value's is 0)", f.Name)
			}
			prm := &ast.Param{Pos: pt.pos, Tag: len(f.Params) + 1}
			if ps.is("out") {
				prm.Out = true
				ps.i++
			} else if ps.is("routekey") {
				prm.RouteKey = true
				ps.i++
			}
			if prm.Type, err = ps.parseType(); err != nil {
				return err
			}
			pn, err := ps.ident("parameter")
			if err != nil {
				return err
			}
			if pnames[pn.text] {
				return ps.errorf(pn.pos, "function %s: parameter %s declared twice", f.Name, pn.text)
			}
			pnames[pn.text] = true
			prm.Name = pn.text
			f.Params = append(f.Params, prm)
		}
		ps.i++
		trail, err := ps.semi()
		if err != nil {
			return err
		}
		f.Doc = append(f.Doc, trail...)
		it.Funcs = append(it.Funcs, f)
	}
	ps.i++
	if _, err := ps.semi(); err != nil {
		return err
	}
	m.Interfaces = append(m.Interfaces, it)
	return nil
}
