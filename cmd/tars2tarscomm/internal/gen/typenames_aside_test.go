package gen

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	tarsparser "github.com/tarscomm/tarscomm/cmd/tars2tarscomm/internal/parser"
)

// The generator gives an interface's Go types names built from the IDL's: <I>Proxy, New<I>Proxy,
// <I>Server, Unimplemented<I>Server, Register<I>, and for a function with out parameters
// <I><F>Result. These are names real IDL uses for its own types: the out parameter of User.query
// is naturally a UserQueryResult, and a struct describing a game server beside interface Game is
// a GameServer. Before, such a file was refused ("generated Go name ... collides"), though it is
// legal and TarsGo's tars2go generates it (a review of the generator). Now the user's types keep
// their names and the generator's step aside with underscores, as parameters do; the code
// builds.
func TestGeneratedTypeNamesStepAside(t *testing.T) {
	for _, c := range []struct {
		name, src string
		want      []string // declarations the generated file must hold
	}{
		{"result", `
module App {
	struct UserQueryResult { 0 optional int code; 1 optional string name; };
	interface User { int query(string id, out UserQueryResult result); };
};`, []string{"type UserQueryResult struct", "type UserQueryResult_ struct", "type UserProxy struct"}},
		{"server", `
module App {
	struct GameServer { 0 optional string ip; 1 optional int port; };
	interface Game { vector<GameServer> list(); };
};`, []string{"type GameServer struct", "type GameServer_ interface", "type UnimplementedGameServer_ struct", "func RegisterGame("}},
		{"proxy", `
module App {
	enum HttpProxy { NONE, SOCKS, CONNECT };
	interface Http { int get(string url, HttpProxy via); };
};`, []string{"type HttpProxy int32", "type HttpProxy_ struct", "func NewHttpProxy_(", "type HttpServer interface"}},
		{"register", `
module App {
	const int RegisterAuth = 1;
	struct NewAuthProxy { 0 optional int x; };
	interface Auth { int login(string who); };
};`, []string{"const RegisterAuth int32", "type NewAuthProxy struct", "type AuthProxy_ struct", "func NewAuthProxy_(", "func RegisterAuth_("}},
	} {
		t.Run(c.name, func(t *testing.T) {
			src := generateOne(t, c.src)
			for _, w := range c.want {
				if !strings.Contains(src, w) {
					t.Errorf("generated code has no %q:\n%s", w, src)
				}
			}
			mustBuild(t, [2]string{"m.tars", c.src})
		})
	}
}

// generateOne generates the .tars source src and returns the one Go file it makes.
func generateOne(t *testing.T, src string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "m.tars")
	if err := os.WriteFile(p, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	prog, err := tarsparser.Load([]string{p}, nil)
	if err != nil {
		t.Fatalf("parser refused a legal file: %v", err)
	}
	files, err := Generate(prog, Options{ImportPrefix: "example.com/gen"})
	if err != nil {
		t.Fatalf("generator refused a legal file: %v", err)
	}
	if len(files) != 1 {
		t.Fatalf("%d files generated, want 1", len(files))
	}
	return string(files[0].Content)
}
