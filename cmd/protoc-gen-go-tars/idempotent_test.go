package main

import (
	"go/format"
	"strings"
	"testing"

	"google.golang.org/protobuf/types/descriptorpb"
)

// TestIdempotentMethods checks that methods whose .proto says option idempotency_level =
// IDEMPOTENT or NO_SIDE_EFFECTS are marked on the ServantProxy by both ways of binding a proxy,
// and that a service without such methods is generated as before (the golden file).
func TestIdempotentMethods(t *testing.T) {
	req := request(t, "testdata/greet.protoset", "module=github.com/tarscomm/tarscomm",
		"common/common.proto", "greet/greet.proto")
	levels := map[string]descriptorpb.MethodOptions_IdempotencyLevel{
		"SayHello":  descriptorpb.MethodOptions_IDEMPOTENT,
		"get_stamp": descriptorpb.MethodOptions_NO_SIDE_EFFECTS,
		"Reset":     descriptorpb.MethodOptions_IDEMPOTENCY_UNKNOWN,
	}
	for _, f := range req.ProtoFile {
		if f.GetName() != "greet/greet.proto" {
			continue
		}
		for _, s := range f.Service {
			for _, m := range s.Method {
				if l, ok := levels[m.GetName()]; ok {
					if m.Options == nil {
						m.Options = &descriptorpb.MethodOptions{}
					}
					m.Options.IdempotencyLevel = l.Enum()
				}
			}
		}
	}
	rsp := run(t, req)
	if rsp.Error != nil {
		t.Fatalf("generator error: %s", rsp.GetError())
	}
	if len(rsp.File) != 1 {
		t.Fatalf("%d files generated, want 1", len(rsp.File))
	}
	src := rsp.File[0].GetContent()
	if formatted, err := format.Source([]byte(src)); err != nil || string(formatted) != src {
		t.Fatalf("generated file is not gofmt'd Go (%v)", err)
	}
	const mark = `sp.MarkIdempotent("SayHello", "get_stamp")`
	if n := strings.Count(src, mark); n != 2 {
		t.Fatalf("%s appears %d times, want 2 (New and SetServantProxy)", mark, n)
	}
	for _, want := range []string{
		"func NewGreeterProxy(sp *servantproxy.ServantProxy) *GreeterProxy {\n\t" + mark + "\n",
		"func (p *GreeterProxy) SetServantProxy(sp *servantproxy.ServantProxy) {\n\t" + mark + "\n\tp.sp = sp\n}",
	} {
		if !strings.Contains(src, want) {
			t.Errorf("generated file lacks:\n%s", want)
		}
	}
}
