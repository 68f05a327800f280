// Package archtest keeps the import graph of tarscomm as docs/ARCHITECTURE.md ("Import rules")
// draws it: imports point downward only, endpoint is a leaf and conf imports only endpoint
// (codec imports only internal/bufpool), and only communicator wires the engine together. It
// runs `go list` over the module; `make depcheck` runs it alone.
package archtest

import (
	"encoding/json"
	"os/exec"
	"strings"
	"testing"
)

const module = "github.com/tarscomm/tarscomm"

// allowed lists, for each library package, the packages of this module it may import.
var allowed = map[string][]string{
	"codec":               {"internal/bufpool"},
	"endpoint":            {},
	"conf":                {"endpoint"},
	"internal/call":       {"codec", "internal/bufpool"},
	"internal/bufpool":    {},
	"internal/inbound":    {"codec", "internal/bufpool"},
	"internal/gnetlog":    {},
	"internal/bigwrite":   {},
	"internal/sockq":      {},
	"internal/lograte":    {},
	"internal/handlerctx": {},
	"internal/datagram":   {"codec"},
	"logging":             {},
	"asyncproc":           {"internal/call", "internal/lograte"},
	"adapterproxy":        {"codec", "endpoint", "internal/call", "internal/lograte", "internal/inbound", "internal/bufpool", "internal/bigwrite", "internal/datagram", "internal/sockq", "stats"},
	"objectproxy":         {"adapterproxy", "endpoint", "internal/call", "codec"},
	"naming":              {"endpoint"},
	"naming/file":         {"endpoint", "naming"},
	"naming/registry":     {"endpoint", "naming", "protocol/endpointf", "protocol/queryf", "servantproxy"},
	"naming/dns":          {"endpoint", "naming"},
	"netthread":           {"adapterproxy", "objectproxy", "codec", "endpoint", "internal/call", "internal/lograte", "internal/gnetlog", "tlsconn", "auth", "stats"},
	"servantproxy":        {"netthread", "objectproxy", "adapterproxy", "asyncproc", "codec", "endpoint", "internal/call", "internal/bufpool", "future", "stats", "interceptor", "dye", "cookie", "tracekey", "internal/carry", "internal/handlerctx"},
	"communicator":        {"servantproxy", "netthread", "adapterproxy", "asyncproc", "conf", "endpoint", "internal/call", "internal/lograte", "tlsconn", "auth", "stats", "debugpage", "interceptor", "report/stat", "report/property", "protocol/statf", "protocol/propertyf", "naming", "naming/file", "naming/registry", "naming/dns", "objectproxy", "logging"},
	"server":              {"codec", "internal/gnetlog", "internal/inbound", "internal/bufpool", "internal/bigwrite", "internal/datagram", "internal/sockq", "internal/lograte", "tlsconn", "auth", "dye", "cookie", "tracekey", "interceptor", "stats", "logging", "internal/handlerctx"},
	"devregistry":         {"endpoint", "naming", "naming/file", "naming/registry", "protocol/endpointf", "protocol/queryf", "server"},
	"server/serverconf":   {"server", "conf", "endpoint", "tlsconn"},
	"tlsconn":             {},
	"auth":                {"codec", "internal/inbound"},
	"internal/tlstest":    {},
	"internal/closetest":  {},
	"internal/benchcpu":   {},
	"internal/archtest":   {},
	"internal/docstest":   {},
	"future":              {},
	"protocol/endpointf":  {"codec"},
	"protocol/requestf":   {"codec"},
	"protocol/queryf":     {"codec", "servantproxy", "server", "future", "protocol/endpointf"},
	"protocol/statf":      {"codec", "servantproxy", "server", "future"},
	"protocol/propertyf":  {"codec", "servantproxy", "server", "future"},
	"internal/faultproxy": {},
	"internal/soak":       {},
	"stats":               {},
	"report/stat":         {"stats", "protocol/statf"},
	"report/property":     {"protocol/propertyf"},
	"interceptor":         {},
	"dye":                 {"codec", "internal/carry"},
	"cookie":              {"internal/carry"},
	"tracekey":            {"codec", "internal/carry"},
	"internal/carry":      {},
	"debugpage":           {"stats"},
}

type pkg struct {
	ImportPath string
	Imports    []string
}

func TestImportGraph(t *testing.T) {
	out, err := exec.Command("go", "list", "-json=ImportPath,Imports", module+"/...").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	dec := json.NewDecoder(strings.NewReader(string(out)))
	seen := map[string]bool{}
	for dec.More() {
		var p pkg
		if err := dec.Decode(&p); err != nil {
			t.Fatal(err)
		}
		rel := strings.TrimPrefix(strings.TrimPrefix(p.ImportPath, module), "/")
		if strings.HasPrefix(rel, "examples/") || strings.HasPrefix(rel, "cmd/") {
			continue // programs may import anything of the module
		}
		ok, known := allowed[rel]
		if !known {
			t.Errorf("package %s is not in the import rules of internal/archtest: add it deliberately", rel)
			continue
		}
		seen[rel] = true
		for _, imp := range p.Imports {
			if !strings.HasPrefix(imp, module+"/") {
				continue
			}
			dep := strings.TrimPrefix(imp, module+"/")
			if !contains(ok, dep) {
				t.Errorf("%s imports %s: not allowed by the import rules (docs/ARCHITECTURE.md)", rel, dep)
			}
		}
	}
	for rel := range allowed {
		if !seen[rel] {
			t.Errorf("rule for %s, which no longer exists", rel)
		}
	}
}

func contains(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}
