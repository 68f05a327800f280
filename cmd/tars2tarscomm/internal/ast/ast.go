// Package ast is the syntax tree of TARS IDL (.tars) files that the parser builds and the
// generator reads: files, modules, structs, enums, constants, interfaces and their types,
// with the position of every declaration and the comments written before (or after, on the
// same line) each one.
package ast

import "fmt"

// Pos is a place in a .tars file; errors name it as file:line:column.
type Pos struct {
	File      string
	Line, Col int
}

func (p Pos) String() string { return fmt.Sprintf("%s:%d:%d", p.File, p.Line, p.Col) }

// File is one parsed .tars file.
type File struct {
	Path     string    // as given or resolved from an #include
	Includes []*File   // the files it #includes, parsed
	Modules  []*Module // the module blocks it declares, outermost first, nested ones after their parent
}

// Module is one module block of a file. Blocks of the same module in several files (or
// several blocks in one file) share Name and all belong to one Go package.
type Module struct {
	Pos        Pos
	Name       string   // full name, e.g. "A::B" for module B nested in module A
	Path       []string // Name split at "::"
	File       *File
	Doc        []string
	Structs    []*Struct
	Enums      []*Enum
	Consts     []*Const
	Interfaces []*Interface
}

// Kind is the kind of a Type.
type Kind int

// The kinds of types.
const (
	Void Kind = iota
	Bool
	Byte
	Short
	Int
	Long
	Float
	Double
	String
	Vector
	Map
	Named // a struct or an enum, resolved into Struct or Enum
)

// Type is a type as written, with its resolution.
type Type struct {
	Pos      Pos
	Kind     Kind
	Unsigned bool   // unsigned byte, short or int
	Elem     *Type  // vector element, map value
	Key      *Type  // map key
	Name     string // Named: the name as written, e.g. "endpointf::EndpointF"
	Struct   *Struct
	Enum     *Enum
}

// Struct is a struct declaration.
type Struct struct {
	Pos    Pos
	Name   string
	Module *Module
	Doc    []string
	Fields []*Field
	Key    []string // the fields of its key[...] declaration, if any (nothing on the wire)
}

// Field is a struct field.
type Field struct {
	Pos      Pos
	Tag      int
	Required bool
	Type     *Type
	Name     string
	Default  *Value // nil without "= value"
	Doc      []string
}

// ValueKind is the kind of a literal Value.
type ValueKind int

// The kinds of literal values.
const (
	IntValue ValueKind = iota
	FloatValue
	StringValue
	BoolValue
	EnumValue // a reference to an enumerator
)

// Value is a literal: a default value or a constant's value.
type Value struct {
	Pos    Pos
	Kind   ValueKind
	Int    int64
	Float  float64
	Str    string // StringValue; for FloatValue and IntValue the text as written
	Bool   bool
	Ref    string // EnumValue: the name as written
	Enum   *Enum  // EnumValue: resolved
	Member *EnumMember
}

// Enum is an enum declaration.
type Enum struct {
	Pos     Pos
	Name    string
	Module  *Module
	Doc     []string
	Members []*EnumMember
}

// EnumMember is one enumerator with its value.
type EnumMember struct {
	Pos   Pos
	Name  string
	Value int32
	Doc   []string
}

// Const is a constant declaration.
type Const struct {
	Pos   Pos
	Type  *Type
	Name  string
	Value *Value
	Doc   []string
}

// Interface is an interface (a servant's functions).
type Interface struct {
	Pos    Pos
	Name   string
	Module *Module
	Doc    []string
	Funcs  []*Func
}

// Func is a function of an interface. Its return value is tag 0 of the reply; its parameters
// take tags 1..n in declaration order, out parameters included.
type Func struct {
	Pos    Pos
	Name   string
	Ret    *Type // Kind Void for void
	Params []*Param
	Doc    []string
}

// Param is a function parameter.
type Param struct {
	Pos      Pos
	Name     string
	Type     *Type
	Out      bool
	RouteKey bool // "routekey": nothing on the wire
	Tag      int  // 1..n
}
