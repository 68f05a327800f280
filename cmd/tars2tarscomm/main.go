package main

import (
	"bytes"
	"errors"
	"flag"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/tarscomm/tarscomm/cmd/tars2tarscomm/internal/gen"
	"github.com/tarscomm/tarscomm/cmd/tars2tarscomm/internal/parser"
)

// includeFlag collects repeated -I flags.
type includeFlag []string

func (f *includeFlag) String() string     { return strings.Join(*f, ",") }
func (f *includeFlag) Set(v string) error { *f = append(*f, v); return nil }

func main() {
	switch err := run(os.Args[1:]); {
	case errors.Is(err, flag.ErrHelp):
		// -h: the usage was printed; asking for it is not a failure.
	case errors.Is(err, errUsage):
		os.Exit(2) // the flag package printed what was wrong, and the usage
	case err != nil:
		fmt.Fprintln(os.Stderr, "tars2tarscomm:", err)
		os.Exit(1)
	}
}

// errUsage is run's error for command-line flags it could not parse: the flag package has
// printed the problem and the usage already.
var errUsage = errors.New("usage")

func run(args []string) error {
	fs := flag.NewFlagSet("tars2tarscomm", flag.ContinueOnError)
	out := fs.String("out", ".", "output directory: module A::B goes to <out>/a/b")
	prefix := fs.String("import", "", "import path of the output directory; default: from the go.mod above it")
	check := fs.Bool("check", false, "write nothing; fail if a generated file differs from the one on disk")
	version := fs.Bool("version", false, "print the version and exit")
	var inc includeFlag
	fs.Var(&inc, "I", "directory searched for #include files (repeatable)")
	fs.Usage = func() {
		fmt.Fprintln(fs.Output(), "usage: tars2tarscomm [-check] [-import PATH] [-out DIR] [-I DIR]... file.tars...\n       tars2tarscomm -version")
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return err
		}
		return errUsage
	}
	if *version {
		fmt.Println("tars2tarscomm", gen.Version)
		return nil
	}
	if fs.NArg() == 0 {
		fs.Usage()
		return fmt.Errorf("need at least one .tars file")
	}
	for _, a := range fs.Args() {
		if strings.HasPrefix(a, "-") {
			return fmt.Errorf("flag %s after the files: flags go before them (tars2tarscomm [flags] file.tars...)", a)
		}
	}
	if *prefix == "" {
		p, err := importPath(*out)
		if err != nil {
			return err
		}
		*prefix = p
	}
	prog, err := parser.Load(fs.Args(), inc)
	if err != nil {
		return err
	}
	files, err := gen.Generate(prog, gen.Options{ImportPrefix: *prefix})
	if err != nil {
		return err
	}
	var stale []string
	for _, f := range files {
		path := filepath.Join(*out, filepath.FromSlash(f.Path))
		if *check {
			if old, err := os.ReadFile(path); err != nil || !bytes.Equal(old, f.Content) {
				stale = append(stale, path)
			}
			continue
		}
		if err := writeFile(path, f.Content); err != nil {
			return err
		}
	}
	if len(stale) > 0 {
		return fmt.Errorf("generated files are stale: %s", strings.Join(stale, ", "))
	}
	return nil
}

// writeFile makes the file at path hold content: a file that already does is left alone (its
// modification time too, so that build tools see nothing changed), any other is replaced whole
// by a rename, so that a generator stopped half-way leaves each file either old or new, never
// cut short.
func writeFile(path string, content []byte) error {
	if old, err := os.ReadFile(path); err == nil && bytes.Equal(old, content) {
		return nil
	}
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	tmp, err := os.CreateTemp(dir, "."+filepath.Base(path)+".*.tmp")
	if err != nil {
		return err
	}
	_, err = tmp.Write(content)
	if err == nil {
		err = tmp.Chmod(0o644)
	}
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp.Name(), path)
	}
	if err != nil {
		_ = os.Remove(tmp.Name())
		return fmt.Errorf("write %s: %w", path, err)
	}
	return nil
}

// importPath returns the import path of directory dir from the go.mod of the module holding it:
// the nearest go.mod in dir or above (dir need not exist yet), its module path joined with
// dir's path below it.
func importPath(dir string) (string, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return "", err
	}
	for d := abs; ; d = filepath.Dir(d) {
		data, err := os.ReadFile(filepath.Join(d, "go.mod"))
		if err == nil {
			mod := modulePath(data)
			if mod == "" {
				return "", fmt.Errorf("%s: no module line; pass -import", filepath.Join(d, "go.mod"))
			}
			rel, err := filepath.Rel(d, abs)
			if err != nil {
				return "", err
			}
			if rel == "." {
				return mod, nil
			}
			return mod + "/" + filepath.ToSlash(rel), nil
		}
		if !errors.Is(err, fs.ErrNotExist) {
			return "", err
		}
		if filepath.Dir(d) == d {
			return "", fmt.Errorf("no go.mod in %s or above it: pass -import (the import path of -out)", abs)
		}
	}
}

// modulePath returns the module path of a go.mod file's content, "" if it has none.
func modulePath(gomod []byte) string {
	for _, line := range strings.Split(string(gomod), "\n") {
		line, _, _ = strings.Cut(line, "//")
		f := strings.Fields(line)
		if len(f) == 2 && f[0] == "module" {
			return strings.Trim(f[1], "\"`")
		}
	}
	return ""
}
