package docstest

// TestGoBlocks compiles docs/cookbook/tars-services.md's client inside this repository, so it
// cannot see what the cookbook's own steps give a reader in a fresh module. This test walks them
// in order, in a temporary module beside a link to this clone (../tarscomm, as the cookbook
// assumes): the ```sh block of step 0 (go mod init, go mod edit), the IDL of step 1 into
// Hello.tars, the ```sh block of step 2 (tars2tarscomm, go mod tidy), the client of step 3 into
// cmd/greeter-client/main.go, and then go build ./cmd/greeter-client, which the cookbook says
// works ("go run ./cmd/greeter-client prints 0 hello tars"). No network (GOPROXY=off): the
// dependencies come from the module cache, as for TestGoBlocks. Before, step 2's go mod tidy ran
// before the client existed, and the build failed on conf's missing dependency (found by the
// newcomer review).

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

func TestCookbookWalk(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the go command several times")
	}
	root := repoRoot(t)
	var blocks []block
	for _, b := range extract(t, root) {
		if b.file == "docs/cookbook/tars-services.md" {
			blocks = append(blocks, b)
		}
	}
	// The blocks in the cookbook's order: sh (setup), IDL, sh (generate), go (client), ...
	if len(blocks) < 4 || blocks[0].lang != "sh" || !strings.HasPrefix(blocks[1].lines[0], "module ") ||
		blocks[2].lang != "sh" || blocks[3].lang != "go" {
		t.Fatalf("docs/cookbook/tars-services.md: the first blocks are not setup, IDL, generate, client")
	}
	tmp := t.TempDir()
	if err := os.Symlink(root, filepath.Join(tmp, "tarscomm")); err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(tmp, "greeter")
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	env := append(os.Environ(), "GOPROXY=off", "GOWORK=off", "GOFLAGS=")
	run := func(b block) {
		for _, l := range b.lines {
			if i := strings.Index(l, "#"); i >= 0 {
				l = l[:i]
			}
			if l = strings.TrimSpace(l); l == "" {
				continue
			}
			cmd := exec.Command("sh", "-c", l)
			cmd.Dir, cmd.Env = dir, env
			if out, err := cmd.CombinedOutput(); err != nil {
				if strings.Contains(string(out), "GOPROXY=off") || strings.Contains(string(out), "module lookup disabled") {
					t.Skipf("%s: %s: a dependency is not in the module cache: %s", b, l, out)
				}
				t.Fatalf("%s: %s: %v\n%s", b, l, err, out)
			}
		}
	}
	write := func(name string, b block) {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(strings.Join(b.lines, "\n")+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	run(blocks[0])
	write("Hello.tars", blocks[1])
	run(blocks[2])
	write("cmd/greeter-client/main.go", blocks[3])
	cmd := exec.Command("go", "build", "-o", os.DevNull, "./cmd/greeter-client")
	cmd.Dir, cmd.Env = dir, env
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Errorf("after the cookbook's steps 0-3 as written (%s, %s, %s, %s), go build ./cmd/greeter-client fails: %v\n%s",
			blocks[0], blocks[1], blocks[2], blocks[3], err, out)
	}
}
