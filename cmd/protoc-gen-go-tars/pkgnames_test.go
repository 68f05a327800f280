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

// compileFiles is compilePlugin for several .proto files (given as descriptors, dependencies
// first; each file's go_package is set to the test's overlay tree + "/" + goPkg[i]): protoc-gen-go
// and this plugin generate every one of them, and the Go package of pkg (a directory of the tree)
// is compiled in an overlay. It returns the plugin's error, or the compiler's output ("" when it
// builds).
func compileFiles(t *testing.T, pkg string, goPkg []string, fds ...*descriptorpb.FileDescriptorProto) (genErr string, buildOut string) {
	t.Helper()
	cwd, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	root := "github.com/tarscomm/tarscomm/cmd/protoc-gen-go-tars/zzbuild" + strings.ToLower(t.Name())
	files := []*descriptorpb.FileDescriptorProto{protodesc.ToFileDescriptorProto(emptypb.File_google_protobuf_empty_proto)}
	var names []string
	for i, fd := range fds {
		fd.Options = &descriptorpb.FileOptions{GoPackage: proto.String(root + "/" + goPkg[i] + ";" + goPkg[i])}
		files = append(files, fd)
		names = append(names, fd.GetName())
	}
	req := &pluginpb.CodeGeneratorRequest{
		FileToGenerate:  names,
		Parameter:       proto.String("module=github.com/tarscomm/tarscomm"),
		ProtoFile:       files,
		CompilerVersion: pinnedProtoc,
	}
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
	out := r.File
	rsp := run(t, req)
	if rsp.Error != nil {
		return rsp.GetError(), ""
	}
	out = append(out, rsp.File...)
	dir := t.TempDir()
	repl := map[string]string{}
	for i, f := range out {
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
	b, err := exec.Command("go", "build", "-overlay", ovPath, root+"/"+pkg).CombinedOutput()
	if err != nil {
		return "", string(b)
	}
	return "", ""
}

func testMessage(name string) *descriptorpb.DescriptorProto {
	return &descriptorpb.DescriptorProto{Name: proto.String(name)}
}

func testService(name string, methods ...*descriptorpb.MethodDescriptorProto) *descriptorpb.ServiceDescriptorProto {
	return &descriptorpb.ServiceDescriptorProto{Name: proto.String(name), Method: methods}
}

// TestStubCollidesAcrossFiles: a message in one .proto file named like a stub of a
// service declared in another file of the same Go package (message GameServer in msgs.proto,
// service Game in game.proto, which imports it: the usual split of messages and services) must be
// refused with an error naming both, as it is when both are in one file, or build. check() looks
// looked at the top-level Go names of the service's own file only, so the plugin wrote type
// GameServer (the server interface) beside protoc-gen-go's type GameServer: "GameServer
// redeclared in this block". It looks at the whole Go package now (samePackage).
func TestStubCollidesAcrossFiles(t *testing.T) {
	msgs := &descriptorpb.FileDescriptorProto{
		Name:        proto.String("x/msgs.proto"),
		Package:     proto.String("x"),
		Syntax:      proto.String("proto3"),
		MessageType: []*descriptorpb.DescriptorProto{testMessage("GameServer"), testMessage("Ping")},
	}
	svc := &descriptorpb.FileDescriptorProto{
		Name:       proto.String("x/game.proto"),
		Package:    proto.String("x"),
		Syntax:     proto.String("proto3"),
		Dependency: []string{"x/msgs.proto"},
		Service: []*descriptorpb.ServiceDescriptorProto{testService("Game", &descriptorpb.MethodDescriptorProto{
			Name: proto.String("Ping"), InputType: proto.String(".x.Ping"), OutputType: proto.String(".x.GameServer"),
		})},
	}
	genErr, out := compileFiles(t, "x", []string{"x", "x"}, msgs, svc)
	if genErr == "" && out != "" {
		t.Fatalf("the plugin took the files and its output does not compile:\n%s", out)
	}
}

// TestLocalHidesImportedPackage: a service whose reply message comes from another Go
// package whose name is one of the generated methods' locals or parameters (a, f, p, rsp, req,
// ctx, opts, cb) must build. protogen names an imported package after the last element of its
// import path (".../proto/a" is a) and knows nothing of the locals, so AsyncGet's body
// `a.rsp, a.cb = new(a.Reply), cb` reads a.Reply on the local carrier a: "a.Reply undefined
// (type *_Svc_Get_async has no field or method Reply)" before. (protoc-gen-go-grpc keeps its
// locals clear of package names for the same reason.) Now a local named like the reply's package
// gets an underscore (localsAvoiding).
func TestLocalHidesImportedPackage(t *testing.T) {
	dep := &descriptorpb.FileDescriptorProto{
		Name:        proto.String("a/reply.proto"),
		Package:     proto.String("a"),
		Syntax:      proto.String("proto3"),
		MessageType: []*descriptorpb.DescriptorProto{testMessage("Reply")},
	}
	svc := &descriptorpb.FileDescriptorProto{
		Name:       proto.String("x/x.proto"),
		Package:    proto.String("x"),
		Syntax:     proto.String("proto3"),
		Dependency: []string{"a/reply.proto", "google/protobuf/empty.proto"},
		Service: []*descriptorpb.ServiceDescriptorProto{testService("Svc", &descriptorpb.MethodDescriptorProto{
			Name: proto.String("Get"), InputType: proto.String(".google.protobuf.Empty"), OutputType: proto.String(".a.Reply"),
		})},
	}
	genErr, out := compileFiles(t, "x", []string{"a", "x"}, dep, svc)
	if genErr != "" {
		t.Fatalf("the plugin refused a legal file: %s", genErr)
	}
	if out != "" {
		t.Fatalf("generated code does not compile:\n%s", out)
	}
}
