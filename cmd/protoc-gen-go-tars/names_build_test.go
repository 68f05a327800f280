package main

import (
	"testing"

	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/descriptorpb"
)

// compilePlugin generates, for one .proto file given as a descriptor, protoc-gen-go's file and
// this plugin's, and compiles them in a package directory that exists only in a build overlay.
// It returns the plugin's error, or the compiler's output ("" when it builds).
func compilePlugin(t *testing.T, fd *descriptorpb.FileDescriptorProto) (genErr string, buildOut string) {
	t.Helper()
	return compileFiles(t, "x", []string{"x"}, fd)
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
