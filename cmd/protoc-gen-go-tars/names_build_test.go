package main

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"google.golang.org/protobuf/cmd/protoc-gen-go/internal_gengo"
	"google.golang.org/protobuf/compiler/protogen"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protodesc"
	"google.golang.org/protobuf/types/descriptorpb"
	"google.golang.org/protobuf/types/known/emptypb"
	"google.golang.org/protobuf/types/pluginpb"
)

// compilePlugin generates, for one .proto file given as a descriptor, protoc-gen-go's file and
// this plugin's, and compiles them in a package directory that exists only in a build overlay.
// It returns the plugin's error, or the compiler's output ("" when it builds).
func compilePlugin(t *testing.T, fd *descriptorpb.FileDescriptorProto) (genErr string, buildOut string) {
	t.Helper()
	cwd, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	sub := "zzbuild" + strings.ToLower(t.Name())
	importPath := "github.com/tarscomm/tarscomm/cmd/protoc-gen-go-tars/" + sub
	fd.Options = &descriptorpb.FileOptions{GoPackage: proto.String(importPath + ";x")}
	req := &pluginpb.CodeGeneratorRequest{
		FileToGenerate:  []string{fd.GetName()},
		Parameter:       proto.String("module=github.com/tarscomm/tarscomm"),
		ProtoFile:       []*descriptorpb.FileDescriptorProto{protodesc.ToFileDescriptorProto(emptypb.File_google_protobuf_empty_proto), fd},
		CompilerVersion: pinnedProtoc,
	}
	var files []*pluginpb.CodeGeneratorResponse_File
	// protoc-gen-go's output.
	pg, err := protogen.Options{}.New(req)
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range pg.Files {
		if f.Generate {
			internal_gengo.GenerateFile(pg, f)
		}
	}
	r := pg.Response()
	if r.Error != nil {
		t.Fatalf("protoc-gen-go: %s", r.GetError())
	}
	files = append(files, r.File...)
	// This plugin's.
	rsp := run(t, req)
	if rsp.Error != nil {
		return rsp.GetError(), ""
	}
	files = append(files, rsp.File...)
	dir := t.TempDir()
	repl := map[string]string{}
	for i, f := range files {
		tmp := filepath.Join(dir, string(rune('a'+i))+".go")
		if err := os.WriteFile(tmp, []byte(f.GetContent()), 0o644); err != nil {
			t.Fatal(err)
		}
		rel := strings.TrimPrefix(f.GetName(), "cmd/protoc-gen-go-tars/")
		repl[filepath.Join(cwd, filepath.FromSlash(rel))] = tmp
	}
	ov, _ := json.Marshal(map[string]any{"Replace": repl})
	ovPath := filepath.Join(dir, "overlay.json")
	if err := os.WriteFile(ovPath, ov, 0o644); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command("go", "build", "-overlay", ovPath, importPath).CombinedOutput()
	if err != nil {
		return "", string(out)
	}
	return "", ""
}

func unaryMethod(name string) *descriptorpb.MethodDescriptorProto {
	return &descriptorpb.MethodDescriptorProto{
		Name:       proto.String(name),
		InputType:  proto.String(".google.protobuf.Empty"),
		OutputType: proto.String(".google.protobuf.Empty"),
	}
}

func fileWith(svcs ...*descriptorpb.ServiceDescriptorProto) *descriptorpb.FileDescriptorProto {
	return &descriptorpb.FileDescriptorProto{
		Name:       proto.String("x/x.proto"),
		Package:    proto.String("x"),
		Syntax:     proto.String("proto3"),
		Dependency: []string{"google/protobuf/empty.proto"},
		Service:    svcs,
	}
}

func expectRefusedOrBuilds(t *testing.T, fd *descriptorpb.FileDescriptorProto) {
	t.Helper()
	genErr, out := compilePlugin(t, fd)
	if genErr == "" && out != "" {
		t.Fatalf("the plugin took the file and its output does not compile:\n%s", out)
	}
}

// The tests below give the plugin files whose names meet the names of the Go it writes; each
// once made Go that did not compile, and is now refused with an error naming the collision or
// compiles.

// A method named SetPushCallback would collide with the generated Proxy.SetPushCallback.
func TestProtoMethodSetPushCallback(t *testing.T) {
	expectRefusedOrBuilds(t, fileWith(&descriptorpb.ServiceDescriptorProto{
		Name:   proto.String("Svc"),
		Method: []*descriptorpb.MethodDescriptorProto{unaryMethod("SetPushCallback")},
	}))
}

// Service A's method B_C and service A_B's method C got the same async carrier type,
// _A_B_C_async (and its pool).
func TestProtoAsyncCarrierCollision(t *testing.T) {
	expectRefusedOrBuilds(t, fileWith(
		&descriptorpb.ServiceDescriptorProto{Name: proto.String("A"), Method: []*descriptorpb.MethodDescriptorProto{unaryMethod("B_C")}},
		&descriptorpb.ServiceDescriptorProto{Name: proto.String("A_B"), Method: []*descriptorpb.MethodDescriptorProto{unaryMethod("C")}},
	))
}

// A message named like a generated identifier of a service in the same package (FooProxy).
func TestProtoMessageNamedLikeProxy(t *testing.T) {
	fd := fileWith(&descriptorpb.ServiceDescriptorProto{
		Name:   proto.String("Foo"),
		Method: []*descriptorpb.MethodDescriptorProto{unaryMethod("Get")},
	})
	fd.MessageType = []*descriptorpb.DescriptorProto{{Name: proto.String("FooProxy")}}
	expectRefusedOrBuilds(t, fd)
}
