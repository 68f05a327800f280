// Package gen writes Go for the TARS modules of a parsed program: per module a Go package
// with its structs (encode and decode methods on tarscomm's codec, defaults, required checks),
// enums, constants, and for each interface a typed proxy (sync, async, one-way and future
// calls) and a server interface with its registration on server.Server.
package gen

import (
	"bytes"
	"fmt"
	goast "go/ast"
	"go/format"
	goparser "go/parser"
	"go/token"
	"maps"
	"path"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"unicode"

	"github.com/tarscomm/tarscomm/cmd/tars2tarscomm/internal/ast"
	"github.com/tarscomm/tarscomm/cmd/tars2tarscomm/internal/parser"
)

// Version is written into the header of generated files.
const Version = "v0.1.0"

// The packages generated code imports.
const (
	codecPkg        = "github.com/tarscomm/tarscomm/codec"
	servantproxyPkg = "github.com/tarscomm/tarscomm/servantproxy"
	serverPkg       = "github.com/tarscomm/tarscomm/server"
	futurePkg       = "github.com/tarscomm/tarscomm/future"
)

// Options say where generated packages go.
type Options struct {
	// ImportPrefix is the import path of the output directory: module A::B is package b at
	// ImportPrefix/a/b.
	ImportPrefix string
}

// File is one generated Go file, its path relative to the output directory.
type File struct {
	Path    string
	Content []byte
}

// Generate returns the Go files of every module block of every file of prog: one file per
// .tars file and module, named after the .tars file.
func Generate(prog *parser.Program, opt Options) ([]File, error) {
	var out []File
	// The top-level Go names declared in each package, across its files: two .tars files of one
	// module make one Go package, where S and s are both S.
	declared := map[string]map[string]ast.Pos{}
	written := map[string]string{} // generated file path -> the .tars file it comes from
	deps := moduleDeps{}
	for _, f := range prog.Files {
		// Group the file's module blocks by module, in order of first appearance.
		var order []string
		blocks := map[string][]*ast.Module{}
		for _, m := range f.Modules {
			if len(m.Structs)+len(m.Enums)+len(m.Consts)+len(m.Interfaces) == 0 {
				continue
			}
			if blocks[m.Name] == nil {
				order = append(order, m.Name)
			}
			blocks[m.Name] = append(blocks[m.Name], m)
		}
		for _, name := range order {
			g := newGen(prog, opt, blocks[name][0])
			dir := moduleDir(blocks[name][0])
			if declared[dir] == nil {
				declared[dir] = map[string]ast.Pos{}
			}
			g.names = declared[dir]
			g.planImports(blocks[name])
			if err := g.module(f, blocks[name]); err != nil {
				return nil, err
			}
			src, err := g.finish()
			if err != nil {
				return nil, err
			}
			p := path.Join(moduleDir(blocks[name][0]), outputBase(f.Path)+".tars.go")
			if prev, dup := written[p]; dup {
				return nil, fmt.Errorf("%s and %s both generate %s (module %s): rename one of them", prev, f.Path, p, name)
			}
			written[p] = f.Path
			out = append(out, File{Path: p, Content: src})
			deps.add(dir, name, f.Path, g.refs)
		}
	}
	if err := deps.cycle(); err != nil {
		return nil, err
	}
	return out, nil
}

// moduleDeps records which module's package uses which other's: Go packages cannot import
// each other, though .tars modules may refer to each other (C++ headers can).
type moduleDeps map[string]map[string]moduleRef // dir -> used dir -> where

// moduleRef is one module's use of another's types: the user's name and the file that uses them.
type moduleRef struct{ from, to, file string }

func (d moduleDeps) add(dir, name, file string, refs map[string]string) {
	for to, toName := range refs {
		if d[dir] == nil {
			d[dir] = map[string]moduleRef{}
		}
		if _, ok := d[dir][to]; !ok {
			d[dir][to] = moduleRef{from: name, to: toName, file: file}
		}
	}
}

// cycle returns an error naming a cycle of modules that use each other's types, if any: the
// generated packages would import each other, which Go refuses.
func (d moduleDeps) cycle() error {
	dirs := slices.Sorted(maps.Keys(d)) // one report for one input
	c := parser.FindCycle(dirs, func(dir string) []string { return slices.Sorted(maps.Keys(d[dir])) })
	if c == nil {
		return nil
	}
	var b strings.Builder
	for i := range len(c) - 1 {
		r := d[c[i]][c[i+1]]
		fmt.Fprintf(&b, "module %s uses %s (%s); ", r.from, r.to, r.file)
	}
	return fmt.Errorf("%sGo packages cannot import each other: move the types so that the modules use each other one way only", b.String())
}

// moduleDir is the directory (and import path suffix) of a module's package: the module's path
// in lower case, an element that the go command treats specially (vendor, which no import path
// may hold; internal, which hides what is under it from the user's code; testdata, which go
// build skips) with _tars added.
func moduleDir(m *ast.Module) string {
	parts := make([]string, len(m.Path))
	for i, p := range m.Path {
		parts[i] = strings.ToLower(p)
		if specialDirs[parts[i]] {
			parts[i] += "_tars"
		}
	}
	return strings.Join(parts, "/")
}

// specialDirs are the directory names the go command gives a meaning to (moduleDir).
var specialDirs = map[string]bool{"vendor": true, "internal": true, "testdata": true}

// outputBase is the name of the Go file generated from the .tars file at tarsPath, before its
// ".tars.go": the file's base name without extension, in lower case ("QueryF.tars" makes
// queryf), made one that go build reads everywhere. Go ignores a file whose name starts with _
// or ., and takes a name whose part before the first dot ends in _<GOOS>, _<GOARCH> or
// _<GOOS>_<GOARCH>, before an optional _test, for a build constraint: the leading _ and . are
// dropped ("_common.tars" makes common) and such a name gets _tars before its first dot
// ("Pay_android.tars" makes pay_android_tars, "x_linux.v2.tars" x_linux_tars.v2).
func outputBase(tarsPath string) string {
	base := strings.ToLower(strings.TrimSuffix(filepath.Base(tarsPath), filepath.Ext(tarsPath)))
	base = strings.TrimLeft(base, "_.")
	if base == "" { // "_.tars"
		base = "tars"
	}
	head, rest, dotted := strings.Cut(base, ".")
	if !goBuildConstraintName(head) {
		return base
	}
	head += "_tars"
	if dotted {
		return head + "." + rest
	}
	return head
}

// goBuildConstraintName reports whether go build takes a file name whose part before its first
// dot is name for a build constraint (go/build's goodOSArchFile): after the first _, its last
// _-separated element, once a final "test" is dropped, is a known GOOS or GOARCH.
func goBuildConstraintName(name string) bool {
	i := strings.Index(name, "_")
	if i < 0 {
		return false
	}
	l := strings.Split(name[i:], "_")
	if n := len(l); l[n-1] == "test" {
		l = l[:n-1]
	}
	last := l[len(l)-1]
	return knownGOOS[last] || knownGOARCH[last]
}

// knownGOOS and knownGOARCH are the operating systems and architectures go build recognizes in
// file names (go/build's lists, which include some Go does not support, or no longer does).
var knownGOOS, knownGOARCH = wordSet(`aix android darwin dragonfly freebsd hurd illumos ios js
	linux nacl netbsd openbsd plan9 solaris wasip1 windows zos`), wordSet(`386 amd64 amd64p32 arm
	armbe arm64 arm64be loong64 mips mipsle mips64 mips64le mips64p32 mips64p32le ppc ppc64 ppc64le
	riscv riscv64 s390 s390x sparc sparc64 wasm`)

func wordSet(words string) map[string]bool {
	m := map[string]bool{}
	for _, w := range strings.Fields(words) {
		m[w] = true
	}
	return m
}

// packageName is the Go package name of a module: its last name in lower case, with a trailing
// underscore when that is a Go keyword or predeclared identifier, main (package main is a
// program, which no package can import) or init (which no package can be imported as).
func packageName(m *ast.Module) string {
	n := strings.ToLower(m.Path[len(m.Path)-1])
	if goReserved[n] || n == "main" || n == "init" {
		n += "_"
	}
	return n
}

type gen struct {
	prog    *parser.Program
	opt     Options
	mod     *ast.Module
	imports map[string]string // path -> name
	refs    map[string]string // the packages of other modules this one uses: dir -> module name
	buf     bytes.Buffer
	names   map[string]ast.Pos // top-level Go names declared by this file
	// aliases are the import names a parameter must not take: the plain alias (moduleAlias) of
	// every module, and the alias this file imports each other module's package as (importAlias).
	aliases map[string]bool
	// modAliases are the import names of the other modules' packages in this file: path -> name.
	modAliases map[string]string
	// pkgNames are the Go names of the TARS types, enumerators and constants of the module's
	// package, in all its files: a parameter does not take them either.
	pkgNames map[string]bool
}

func newGen(prog *parser.Program, opt Options, m *ast.Module) *gen {
	g := &gen{prog: prog, opt: opt, mod: m, imports: map[string]string{}, refs: map[string]string{},
		names: map[string]ast.Pos{}, aliases: map[string]bool{}, modAliases: map[string]string{},
		pkgNames: map[string]bool{}}
	for _, ms := range prog.Modules {
		for _, other := range ms {
			g.aliases[moduleAlias(other)] = true
			if moduleDir(other) != moduleDir(m) {
				continue
			}
			for _, s := range other.Structs {
				g.pkgNames[exported(s.Name)] = true
				g.pkgNames["New"+exported(s.Name)] = true
			}
			for _, e := range other.Enums {
				g.pkgNames[exported(e.Name)] = true
				for _, mem := range e.Members {
					g.pkgNames[exported(e.Name)+"_"+mem.Name] = true
				}
			}
			for _, c := range other.Consts {
				g.pkgNames[exported(c.Name)] = true
			}
		}
	}
	return g
}

func (g *gen) p(args ...any) {
	for _, a := range args {
		fmt.Fprint(&g.buf, a)
	}
	g.buf.WriteByte('\n')
}

// use records an import and returns its package name.
func (g *gen) use(importPath string) string {
	name := path.Base(importPath)
	g.imports[importPath] = name
	return name
}

func (g *gen) declare(name string, pos ast.Pos) error {
	if prev, dup := g.names[name]; dup {
		return fmt.Errorf("%s: generated Go name %s collides with the one generated for %s", pos, name, prev)
	}
	g.names[name] = pos
	return nil
}

func (g *gen) finish() ([]byte, error) {
	var head bytes.Buffer
	fmt.Fprintf(&head, "// Code generated by tars2tarscomm %s. DO NOT EDIT.\n// source: %s\n\npackage %s\n\n",
		Version, filepath.ToSlash(g.mod.File.Path), packageName(g.mod))
	used, err := selectorNames(g.buf.Bytes())
	if err != nil {
		return nil, fmt.Errorf("%s: generated code does not parse (a generator bug): %v\n%s", g.mod.File.Path, err, g.buf.Bytes())
	}
	if len(g.imports) > 0 {
		paths := make([]string, 0, len(g.imports))
		for p := range g.imports {
			if used[g.imports[p]] { // an interface without functions uses no context, codec, ...
				paths = append(paths, p)
			}
		}
		sort.Strings(paths)
		head.WriteString("import (\n")
		for _, p := range paths {
			fmt.Fprintf(&head, "%s %q\n", g.imports[p], p)
		}
		head.WriteString(")\n\n")
	}
	head.Write(g.buf.Bytes())
	src, err := format.Source(head.Bytes())
	if err != nil {
		return nil, fmt.Errorf("%s: generated code does not parse (a generator bug): %v\n%s", g.mod.File.Path, err, head.Bytes())
	}
	return src, nil
}

// selectorNames returns the names x of the selectors x.y in the Go declarations body: the
// packages it uses, among them.
func selectorNames(body []byte) (map[string]bool, error) {
	f, err := goparser.ParseFile(token.NewFileSet(), "", append([]byte("package p\n"), body...), goparser.SkipObjectResolution)
	if err != nil {
		return nil, err
	}
	used := map[string]bool{}
	goast.Inspect(f, func(n goast.Node) bool {
		if sel, ok := n.(*goast.SelectorExpr); ok {
			if id, ok := sel.X.(*goast.Ident); ok {
				used[id.Name] = true
			}
		}
		return true
	})
	return used, nil
}

// exported capitalizes an IDL name into an exported Go name.
func exported(name string) string {
	r := []rune(name)
	if len(r) > 0 && r[0] == '_' {
		return "X" + name
	}
	r[0] = unicode.ToUpper(r[0])
	return string(r)
}

// goReserved are the keywords and predeclared identifiers of Go.
var goReserved = map[string]bool{}

func init() {
	for _, w := range strings.Fields(`break case chan const continue default defer else fallthrough
		for func go goto if import interface map package range return select struct switch type var
		any bool byte comparable complex64 complex128 error float32 float64 int int8 int16 int32
		int64 rune string uint uint8 uint16 uint32 uint64 uintptr true false iota nil append cap
		clear close complex copy delete imag len make max min new panic print println real recover`) {
		goReserved[w] = true
	}
}

// signatureNames are the names the generated signatures give beside the IDL's parameters (ctx,
// opts, cb in the proxy methods; cur, ret, err in the server methods and callbacks) and the
// packages the proxy methods' bodies use: an IDL parameter with one of these names is renamed
// with a trailing underscore. The bodies' own locals (the receiver, a, e, r, b, f, zero) give way
// to the parameters instead (localNames), so that IDL names such as req, rsp, a or p stay as
// written.
var signatureNames = map[string]bool{
	"ctx": true, "opts": true, "cb": true, "cur": true, "ret": true, "err": true,
	"codec": true, "errors": true, "future": true, "servantproxy": true,
}

// paramName is the Go name of a function parameter: a Go keyword or predeclared name, a name
// of signatureNames, or _ (the blank identifier, which the bodies could not read) gets a trailing
// underscore (_ becomes __).
func paramName(name string) string {
	if goReserved[name] || signatureNames[name] || name == "_" {
		return name + "_"
	}
	return name
}

// structMethods are the methods generated on every struct; fields are renamed around them.
var structMethods = map[string]bool{
	"Reset": true, "Encode": true, "Decode": true, "EncodeTag": true, "DecodeTag": true,
	"MarshalTars": true, "UnmarshalTars": true,
}

// fieldNames returns the Go names of s's fields: capitalized, clear of the method names, unique.
func fieldNames(s *ast.Struct) map[*ast.Field]string {
	names := map[*ast.Field]string{}
	used := map[string]bool{}
	for _, f := range s.Fields {
		n := exported(f.Name)
		for structMethods[n] || used[n] {
			n += "_"
		}
		used[n] = true
		names[f] = n
	}
	return names
}

// typeName is the Go name of a struct or enum, qualified from the current package.
func (g *gen) qualified(m *ast.Module, name string) string {
	if m.Name == g.mod.Name {
		return exported(name)
	}
	importPath := g.importPath(m)
	alias := g.importAlias(m)
	g.imports[importPath] = alias
	g.refs[moduleDir(m)] = m.Name
	return alias + "." + exported(name)
}

// importPath is the import path of module m's package.
func (g *gen) importPath(m *ast.Module) string {
	return strings.TrimSuffix(g.opt.ImportPrefix, "/") + "/" + moduleDir(m)
}

// importAlias is the name this file imports module m's package as: its plain alias
// (moduleAlias), unless the file already imports another module's package under that name (A::B
// and A_B are both a_b; AB and Abtars both abtars), then the plain alias with the first number
// from 2 that no module of the file has ("a_b2").
func (g *gen) importAlias(m *ast.Module) string {
	p := g.importPath(m)
	if a, ok := g.modAliases[p]; ok {
		return a
	}
	taken := map[string]bool{}
	for _, a := range g.modAliases {
		taken[a] = true
	}
	a := moduleAlias(m)
	for n := 2; taken[a] || goReserved[a] || aliasTaken[a]; n++ {
		a = moduleAlias(m) + strconv.Itoa(n)
	}
	g.modAliases[p] = a
	g.aliases[a] = true
	return a
}

// planImports gives every other module whose types the blocks use its import alias, in the
// order of the import paths, before any code is written: the parameters' names (funcInfo) keep
// clear of them all, and which module gets the plain alias does not depend on where in the file
// each is first used.
func (g *gen) planImports(blocks []*ast.Module) {
	used := map[string]*ast.Module{}
	var walk func(t *ast.Type)
	walk = func(t *ast.Type) {
		switch t.Kind {
		case ast.Vector:
			walk(t.Elem)
		case ast.Map:
			walk(t.Key)
			walk(t.Elem)
		case ast.Named:
			var m *ast.Module
			if t.Struct != nil {
				m = t.Struct.Module
			} else {
				m = t.Enum.Module
			}
			if m.Name != g.mod.Name {
				used[g.importPath(m)] = m
			}
		}
	}
	for _, b := range blocks {
		for _, c := range b.Consts {
			walk(c.Type)
		}
		for _, s := range b.Structs {
			for _, f := range s.Fields {
				walk(f.Type)
			}
		}
		for _, it := range b.Interfaces {
			for _, fn := range it.Funcs {
				walk(fn.Ret)
				for _, prm := range fn.Params {
					walk(prm.Type)
				}
			}
		}
	}
	// Paths whose plain aliases are unique are given them first, so that a suffixed alias never
	// takes another module's plain one (A_B, A::B and A_B2).
	plain := map[string]int{}
	for _, m := range used {
		plain[moduleAlias(m)]++
	}
	paths := slices.Sorted(maps.Keys(used))
	for _, p := range paths {
		if plain[moduleAlias(used[p])] == 1 {
			g.importAlias(used[p])
		}
	}
	for _, p := range paths {
		g.importAlias(used[p])
	}
}

// moduleAlias is the plain name a module's package is imported as (importAlias makes it unique in
// a file): its path in lower case joined by '_' ("base", "app_common"), with "tars" added when
// that name is taken in the importing file: a Go keyword or predeclared identifier (type, int32),
// init (no package may be imported as init), a package generated code imports (server, codec,
// fmt, ...), or a name its methods use for a receiver or local (d, e, st, ..., and the counters
// and loop variables of nested lists and maps: ok1, i2, ...).
func moduleAlias(m *ast.Module) string {
	a := strings.ToLower(strings.Join(m.Path, "_"))
	if goReserved[a] || aliasTaken[a] || len(a) <= 2 || isDepthLocal(a) {
		a += "tars"
	}
	return a
}

// aliasTaken are the package names generated code imports, init, and the longer names of its
// locals.
var aliasTaken = map[string]bool{
	"codec": true, "context": true, "errors": true, "fmt": true, "strconv": true, "future": true,
	"servantproxy": true, "server": true, "proto": true, "zero": true, "err": true, "ctx": true,
	"opts": true, "cur": true, "ret": true, "init": true,
}

// isDepthLocal reports whether name is one of the locals encode and decode number by nesting
// depth: i, k, v, n, ok or u followed by digits.
func isDepthLocal(name string) bool {
	for _, p := range []string{"ok", "i", "k", "v", "n", "u"} {
		if rest, ok := strings.CutPrefix(name, p); ok && rest != "" && strings.Trim(rest, "0123456789") == "" {
			return true
		}
	}
	return false
}

// isBytes reports whether t is vector<byte>, written as a simple list.
func isBytes(t *ast.Type) bool {
	return t.Kind == ast.Vector && t.Elem.Kind == ast.Byte && !t.Elem.Unsigned
}

// goType is the Go type of t.
func (g *gen) goType(t *ast.Type) string {
	switch t.Kind {
	case ast.Bool:
		return "bool"
	case ast.Byte:
		if t.Unsigned {
			return "uint8"
		}
		return "int8"
	case ast.Short:
		if t.Unsigned {
			return "uint16"
		}
		return "int16"
	case ast.Int:
		if t.Unsigned {
			return "uint32"
		}
		return "int32"
	case ast.Long:
		return "int64"
	case ast.Float:
		return "float32"
	case ast.Double:
		return "float64"
	case ast.String:
		return "string"
	case ast.Vector:
		if isBytes(t) {
			return "[]byte"
		}
		return "[]" + g.goType(t.Elem)
	case ast.Map:
		return "map[" + g.goType(t.Key) + "]" + g.goType(t.Elem)
	case ast.Named:
		if t.Struct != nil {
			return g.qualified(t.Struct.Module, t.Struct.Name)
		}
		return g.qualified(t.Enum.Module, t.Enum.Name)
	}
	return "struct{}"
}

// zero is the Go zero value of t.
func (g *gen) zero(t *ast.Type) string {
	switch t.Kind {
	case ast.Bool:
		return "false"
	case ast.String:
		return `""`
	case ast.Vector, ast.Map:
		return "nil"
	case ast.Named:
		if t.Struct != nil {
			return g.goType(t) + "{}"
		}
	case ast.Void:
		return "struct{}{}"
	}
	return "0"
}

// memberName is the Go name of an enumerator.
func (g *gen) memberName(e *ast.Enum, mem *ast.EnumMember) string {
	return g.qualified(e.Module, e.Name) + "_" + mem.Name
}

// literal is the Go expression of a default or constant value of type t.
func (g *gen) literal(t *ast.Type, v *ast.Value) string {
	switch v.Kind {
	case ast.BoolValue:
		return strconv.FormatBool(v.Bool)
	case ast.IntValue:
		return strconv.FormatInt(v.Int, 10)
	case ast.FloatValue:
		return strconv.FormatFloat(v.Float, 'g', -1, 64)
	case ast.StringValue:
		return strconv.Quote(v.Str)
	case ast.EnumValue:
		return g.memberName(v.Enum, v.Member)
	}
	return g.zero(t)
}

// doc writes IDL comment lines as a Go doc comment, or def when there are none.
func (g *gen) doc(lines []string, def string) {
	if len(lines) == 0 {
		if def != "" {
			g.p("// ", def)
		}
		return
	}
	if def != "" {
		g.p("// ", def)
		g.p("//")
	}
	for _, l := range lines {
		g.p(strings.TrimRight("// "+l, " "))
	}
}

func (g *gen) module(f *ast.File, blocks []*ast.Module) error {
	for _, m := range blocks {
		for _, c := range m.Consts {
			if err := g.genConst(c); err != nil {
				return err
			}
		}
		for _, e := range m.Enums {
			if err := g.genEnum(e); err != nil {
				return err
			}
		}
		for _, s := range m.Structs {
			name := exported(s.Name)
			for _, n := range []string{name, "New" + name} {
				if err := g.declare(n, s.Pos); err != nil {
					return err
				}
			}
			def := fmt.Sprintf("%s is the TARS struct %s::%s.", name, m.Name, s.Name)
			g.genStruct(s, "", g.mod.Name+"::"+s.Name, def, s.Doc)
			g.genNew(s, name)
		}
		for _, it := range m.Interfaces {
			if err := g.genInterface(it); err != nil {
				return err
			}
		}
	}
	return nil
}

func (g *gen) genConst(c *ast.Const) error {
	name := exported(c.Name)
	if err := g.declare(name, c.Pos); err != nil {
		return err
	}
	g.doc(c.Doc, "")
	g.p("const ", name, " ", g.goType(c.Type), " = ", g.literal(c.Type, c.Value))
	g.p()
	return nil
}

func (g *gen) genEnum(e *ast.Enum) error {
	name := exported(e.Name)
	if err := g.declare(name, e.Pos); err != nil {
		return err
	}
	g.doc(e.Doc, fmt.Sprintf("%s is the TARS enum %s::%s, an int on the wire.", name, e.Module.Name, e.Name))
	g.p("type ", name, " int32")
	g.p()
	g.p("// The values of ", name, ".")
	g.p("const (")
	for _, mem := range e.Members {
		if err := g.declare(name+"_"+mem.Name, mem.Pos); err != nil {
			return err
		}
		for _, l := range mem.Doc {
			g.p(strings.TrimRight("// "+l, " "))
		}
		g.p(name, "_", mem.Name, " ", name, " = ", mem.Value)
	}
	g.p(")")
	g.p()
	strconvName := g.use("strconv")
	g.p("// String returns the name of the enumerator, or ", name, "(n) for another value.")
	g.p("func (x ", name, ") String() string {")
	g.p("switch x {")
	seen := map[int32]bool{}
	for _, mem := range e.Members {
		if seen[mem.Value] {
			continue
		}
		seen[mem.Value] = true
		g.p("case ", name, "_", mem.Name, ":")
		g.p("return ", strconv.Quote(mem.Name))
	}
	g.p("}")
	g.p("return \"", name, "(\" + ", strconvName, ".Itoa(int(x)) + \")\"")
	g.p("}")
	g.p()
	return nil
}

// hasDefaults reports whether a struct or one of its nested struct fields has a default value
// different from Go's zero value.
func hasDefaults(s *ast.Struct, seen map[*ast.Struct]bool) bool {
	if seen[s] {
		return false
	}
	seen[s] = true
	for _, f := range s.Fields {
		if f.Default != nil && !isZeroValue(f.Default) {
			return true
		}
		if f.Type.Kind == ast.Named && f.Type.Struct != nil && hasDefaults(f.Type.Struct, seen) {
			return true
		}
	}
	return false
}

func isZeroValue(v *ast.Value) bool {
	switch v.Kind {
	case ast.BoolValue:
		return !v.Bool
	case ast.IntValue:
		return v.Int == 0
	case ast.FloatValue:
		return v.Float == 0
	case ast.StringValue:
		return v.Str == ""
	case ast.EnumValue:
		return v.Member.Value == 0
	}
	return false
}

// genNew writes New<goName>, which returns a value with the IDL's defaults.
func (g *gen) genNew(s *ast.Struct, goName string) {
	if hasDefaults(s, map[*ast.Struct]bool{}) {
		g.p("// New", goName, " returns ", article(goName), " ", goName, " with every field at its IDL default value. A literal")
		g.p("// ", goName, "{} has Go's zero values instead: build values with New", goName, " (or call Reset)")
		g.p("// so that the defaults of the .tars file apply.")
	} else {
		g.p("// New", goName, " returns ", article(goName), " ", goName, " with every field at its default value (the IDL gives")
		g.p("// none other than Go's zero values, so a literal ", goName, "{} is the same).")
	}
	g.p("func New", goName, "() ", goName, " {")
	g.p("var st ", goName)
	g.p("st.Reset()")
	g.p("return st")
	g.p("}")
	g.p()
}

// article is "a" or "an" before name, by its first letter.
func article(name string) string {
	if name != "" && strings.ContainsRune("AEIOUaeiou", rune(name[0])) {
		return "an"
	}
	return "a"
}

// genStruct writes struct s as Go type goName (exported(s.Name) when empty) with its methods.
// errName names it in decode errors.
func (g *gen) genStruct(s *ast.Struct, goName, errName, def string, doc []string) {
	if goName == "" {
		goName = exported(s.Name)
	}
	codec := g.use(codecPkg)
	names := fieldNames(s)
	g.doc(doc, def)
	if _, hasNew := g.names["New"+goName]; hasNew && hasDefaults(s, map[*ast.Struct]bool{}) {
		g.p("//")
		g.p("// Its fields have IDL defaults that a literal ", goName, "{} does not apply: make values with")
		g.p("// New", goName, ", or call Reset.")
	}
	if len(s.Key) > 0 {
		g.p("//")
		g.p("// Its key (key[...]: ordering, nothing on the wire) is ", strings.Join(s.Key, ", "), ".")
	}
	g.p("type ", goName, " struct {")
	for _, f := range s.Fields {
		for _, l := range f.Doc {
			g.p(strings.TrimRight("// "+l, " "))
		}
		req := "optional"
		if f.Required {
			req = "require"
		}
		suffix := ""
		if f.Default != nil {
			suffix = ", default " + g.literal(f.Type, f.Default)
		}
		g.p(names[f], " ", g.goType(f.Type), " // tag ", f.Tag, ", ", req, suffix)
	}
	g.p("}")
	g.p()

	// Reset.
	g.p("// Reset sets every field of st to its default value (Go's zero value without one).")
	g.p("func (st *", goName, ") Reset() {")
	var inits []string
	for _, f := range s.Fields {
		if f.Default != nil && !isZeroValue(f.Default) {
			inits = append(inits, names[f]+": "+g.literal(f.Type, f.Default))
		}
	}
	g.p("*st = ", goName, "{", strings.Join(inits, ", "), "}")
	for _, f := range s.Fields {
		if f.Type.Kind == ast.Named && f.Type.Struct != nil && hasDefaults(f.Type.Struct, map[*ast.Struct]bool{}) {
			g.p("st.", names[f], ".Reset()")
		}
	}
	g.p("}")
	g.p()

	// Encode.
	g.p("// Encode appends st's fields to e, as the body of a struct. Optional fields equal to their")
	g.p("// default value are not written, as tars2cpp and tars2go do; optional enums and structs are.")
	g.p("func (st *", goName, ") Encode(e *", codec, ".Encoder) {")
	for _, f := range s.Fields {
		expr := "st." + names[f]
		cond := ""
		if !f.Required {
			cond = g.writeCond(f.Type, expr, f.Default)
		}
		if cond != "" {
			g.p("if ", cond, " {")
		}
		g.encode(f.Type, expr, strconv.Itoa(f.Tag), 0)
		if cond != "" {
			g.p("}")
		}
	}
	g.p("}")
	g.p()
	g.p("// EncodeTag appends st to e as a struct field at tag.")
	g.p("func (st *", goName, ") EncodeTag(e *", codec, ".Encoder, tag byte) {")
	g.p("e.WriteStructBegin(tag)")
	g.p("st.Encode(e)")
	g.p("e.WriteStructEnd()")
	g.p("}")
	g.p()
	g.p("// MarshalTars appends st's encoding (its fields, as Encode writes them) to b.")
	g.p("func (st *", goName, ") MarshalTars(b []byte) []byte {")
	g.p("e := ", codec, ".Encoder{Buf: b}")
	g.p("st.Encode(&e)")
	g.p("return e.Buf")
	g.p("}")
	g.p()

	// Decode.
	g.p("// Decode reads st's fields from d, skipping fields of unknown tags. Every field is set: an")
	g.p("// absent optional field to its default value; a required field that is absent is an error")
	g.p("// wrapping codec.ErrRequired. Decoding into a value that already holds data reuses its memory")
	g.p("// (the capacity of its slices, its maps, strings equal to the ones decoded), so that decoding")
	g.p("// into a value again and again allocates only what changed; decode into a fresh value to keep")
	g.p("// the old one intact.")
	g.p("func (st *", goName, ") Decode(d *", codec, ".Decoder) error {")
	g.p("var err error")
	for _, f := range s.Fields {
		errRet := fmt.Sprintf("return %s.FieldError(%q, %q, err)", codec, errName, f.Name)
		expr := "st." + names[f]
		tag := strconv.Itoa(f.Tag)
		if !f.Required && f.Default != nil && !isZeroValue(f.Default) {
			g.p("if ok, err := d.Has(", tag, "); err != nil {")
			g.p(errRet)
			g.p("} else if ok {")
			g.decode(f.Type, expr, tag, "false", errRet, 0)
			g.p("} else {")
			g.p(expr, " = ", g.literal(f.Type, f.Default))
			g.p("}")
			continue
		}
		g.decode(f.Type, expr, tag, strconv.FormatBool(f.Required), errRet, 0)
	}
	g.p("_ = err")
	g.p("return nil")
	g.p("}")
	g.p()
	g.p("// DecodeTag reads st from the struct field at tag of d. An absent field leaves st reset, or")
	g.p("// is an error wrapping codec.ErrRequired if required is set. Fields of the struct that st")
	g.p("// does not know are skipped.")
	g.p("func (st *", goName, ") DecodeTag(d *", codec, ".Decoder, tag byte, required bool) error {")
	g.p("found, err := d.ReadStructBegin(tag, required)")
	g.p("if err != nil || !found {")
	g.p("st.Reset()")
	g.p("return err")
	g.p("}")
	g.p("if err := st.Decode(d); err != nil {")
	g.p("return err")
	g.p("}")
	g.p("return d.ReadStructEnd()")
	g.p("}")
	g.p()
	g.p("// UnmarshalTars decodes st from b, as Decode does.")
	g.p("func (st *", goName, ") UnmarshalTars(b []byte) error {")
	g.p("var d ", codec, ".Decoder")
	g.p("d.Reset(b)")
	g.p("return st.Decode(&d)")
	g.p("}")
	g.p()
}

// writeCond is the condition under which an optional field is written: it differs from its
// default. Enums and structs are always written ("" means no condition).
func (g *gen) writeCond(t *ast.Type, expr string, def *ast.Value) string {
	switch t.Kind {
	case ast.Vector, ast.Map:
		return "len(" + expr + ") > 0"
	case ast.Named:
		return ""
	case ast.Bool:
		if def != nil && def.Bool {
			return "!" + expr
		}
		return expr
	}
	d := g.zero(t)
	if def != nil {
		d = g.literal(t, def)
	}
	return expr + " != " + d
}

// writer is the Encoder method that writes a basic type.
func writer(t *ast.Type) string {
	switch t.Kind {
	case ast.Bool:
		return "WriteBool"
	case ast.Byte:
		if t.Unsigned {
			return "WriteUint8"
		}
		return "WriteInt8"
	case ast.Short:
		if t.Unsigned {
			return "WriteUint16"
		}
		return "WriteInt16"
	case ast.Int:
		if t.Unsigned {
			return "WriteUint32"
		}
		return "WriteInt32"
	case ast.Long:
		return "WriteInt64"
	case ast.Float:
		return "WriteFloat32"
	case ast.Double:
		return "WriteFloat64"
	case ast.String:
		return "WriteString"
	}
	return ""
}

// encode writes the statements that encode expr, of type t, at tag.
func (g *gen) encode(t *ast.Type, expr, tag string, depth int) {
	switch t.Kind {
	case ast.Vector:
		if isBytes(t) {
			g.p("e.WriteBytes(", tag, ", ", expr, ")")
			return
		}
		i := fmt.Sprintf("i%d", depth)
		g.p("e.WriteListHead(", tag, ", len(", expr, "))")
		g.p("for ", i, " := range ", expr, " {")
		g.encode(t.Elem, expr+"["+i+"]", "0", depth+1)
		g.p("}")
	case ast.Map:
		k, v := fmt.Sprintf("k%d", depth), fmt.Sprintf("v%d", depth)
		g.p("e.WriteMapHead(", tag, ", len(", expr, "))")
		g.p("for ", k, ", ", v, " := range ", expr, " {")
		g.encode(t.Key, k, "0", depth+1)
		g.encode(t.Elem, v, "1", depth+1)
		g.p("}")
	case ast.Named:
		if t.Struct != nil {
			g.p(expr, ".EncodeTag(e, ", tag, ")")
			return
		}
		g.p("e.WriteInt32(", tag, ", int32(", expr, "))")
	default:
		g.p("e.", writer(t), "(", tag, ", ", expr, ")")
	}
}

// reader is the Decoder method that reads a basic type and the Go type it returns.
func reader(t *ast.Type) (method, goType string) {
	switch t.Kind {
	case ast.Bool:
		return "ReadBool", "bool"
	case ast.Byte:
		if t.Unsigned {
			return "ReadInt16", "int16"
		}
		return "ReadInt8", "int8"
	case ast.Short:
		if t.Unsigned {
			return "ReadInt32", "int32"
		}
		return "ReadInt16", "int16"
	case ast.Int:
		if t.Unsigned {
			return "ReadInt64", "int64"
		}
		return "ReadInt32", "int32"
	case ast.Long:
		return "ReadInt64", "int64"
	case ast.Float:
		return "ReadFloat32", "float32"
	case ast.Double:
		return "ReadFloat64", "float64"
	case ast.String:
		return "ReadString", "string"
	case ast.Named: // enum
		return "ReadInt32", "int32"
	}
	return "", ""
}

// holdsMemory reports whether a value of type t holds memory of its own (a string, a list, a map,
// a struct), which a map's decoder reuses for a repeated key and keeps for a failed entry.
func holdsMemory(t *ast.Type) bool {
	switch t.Kind {
	case ast.Vector, ast.Map, ast.String:
		return true
	case ast.Named:
		return t.Struct != nil
	}
	return false
}

// decode writes the statements that decode the field at tag into target, of type t; req is
// "true" or "false"; errRet is the statement that returns err.
func (g *gen) decode(t *ast.Type, target, tag, req, errRet string, depth int) {
	codec := g.use(codecPkg)
	switch t.Kind {
	case ast.Vector:
		if isBytes(t) {
			g.p("if ", target, ", err = d.ReadBytesInto(", tag, ", ", req, ", ", target, "); err != nil {")
			g.p(errRet)
			g.p("}")
			return
		}
		// The count n comes from the input: the slice is sized by codec.MakeList, which
		// sets aside no more than the input justifies, and grows past that as elements
		// are actually read. Its length follows the elements read, so that a decode that
		// fails leaves only those.
		n, ok, i := fmt.Sprintf("n%d", depth), fmt.Sprintf("ok%d", depth), fmt.Sprintf("i%d", depth)
		g.p("if ", n, ", ", ok, ", err := d.ReadListHead(", tag, ", ", req, "); err != nil {")
		g.p(errRet)
		g.p("} else if ", ok, " {")
		g.p("if ", target, " == nil || cap(", target, ") < ", n, " {")
		g.p(target, " = ", codec, ".MakeList[", g.goType(t.Elem), "](d, ", n, ")")
		g.p("} else {")
		g.p(target, " = ", target, "[:0]")
		g.p("}")
		g.p("for ", i, " := range ", n, " {")
		g.p("if ", i, " < cap(", target, ") {")
		g.p(target, " = ", target, "[:", i, "+1]")
		g.p("} else {")
		g.p(target, " = append(", target, ", ", g.zero(t.Elem), ")")
		g.p("}")
		g.decode(t.Elem, target+"["+i+"]", "0", "true", errRet, depth+1)
		g.p("}")
		g.p("} else {")
		g.p(target, " = ", target, "[:0]")
		g.p("}")
	case ast.Map:
		n, ok, k, v := fmt.Sprintf("n%d", depth), fmt.Sprintf("ok%d", depth), fmt.Sprintf("k%d", depth), fmt.Sprintf("v%d", depth)
		g.p("if ", n, ", ", ok, ", err := d.ReadMapHead(", tag, ", ", req, "); err != nil {")
		g.p(errRet)
		g.p("} else if ", ok, " {")
		g.p("if ", target, " == nil {")
		g.p(target, " = ", codec, ".MakeMap[", g.goType(t.Key), ", ", g.goType(t.Elem), "](d, ", n, ")")
		g.p("} else {")
		g.p("clear(", target, ")")
		g.p("}")
		// A key read twice has its value decoded into the one it replaces, whose memory is
		// reused (the last value wins, as before), and a value whose decode fails is kept
		// with what it holds, as a list keeps the elements read: memory spent on a value
		// the decode then dropped would be bounded by nothing (codec's allowance).
		g.p("for range ", n, " {")
		g.p("var ", k, " ", g.goType(t.Key))
		g.decode(t.Key, k, "0", "true", errRet, depth+1)
		if holdsMemory(t.Elem) {
			g.p(v, " := ", target, "[", k, "]")
			g.decode(t.Elem, v, "1", "true", target+"["+k+"] = "+v+"\n"+errRet, depth+1)
		} else { // a number: nothing to reuse or keep
			g.p("var ", v, " ", g.goType(t.Elem))
			g.decode(t.Elem, v, "1", "true", errRet, depth+1)
		}
		g.p(target, "[", k, "] = ", v)
		g.p("}")
		g.p("} else {")
		g.p("clear(", target, ")")
		g.p("}")
	case ast.Named:
		if t.Struct != nil {
			g.p("if err = ", target, ".DecodeTag(d, ", tag, ", ", req, "); err != nil {")
			g.p(errRet)
			g.p("}")
			return
		}
		u := fmt.Sprintf("u%d", depth)
		g.p("if ", u, ", err := d.ReadInt32(", tag, ", ", req, "); err != nil {")
		g.p(errRet)
		g.p("} else {")
		g.p(target, " = ", g.goType(t), "(", u, ")")
		g.p("}")
	default:
		method, rt := reader(t)
		if t.Kind == ast.String {
			g.p("if ", target, ", err = d.ReadStringKeep(", tag, ", ", req, ", ", target, "); err != nil {")
			g.p(errRet)
			g.p("}")
			return
		}
		if rt == g.goType(t) {
			g.p("if ", target, ", err = d.", method, "(", tag, ", ", req, "); err != nil {")
			g.p(errRet)
			g.p("}")
			return
		}
		u := fmt.Sprintf("u%d", depth)
		g.p("if ", u, ", err := d.", method, "(", tag, ", ", req, "); err != nil {")
		g.p(errRet)
		g.p("} else {")
		g.p(target, " = ", g.goType(t), "(", u, ")")
		g.p("}")
	}
}
