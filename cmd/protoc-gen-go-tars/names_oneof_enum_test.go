package main

import (
	"testing"

	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/descriptorpb"
)

// TestProtoOneofWrapperNamedLikeProxy: a oneof wrapper type of protoc-gen-go (message Req's
// oneof field echo_proxy is the type Req_EchoProxy) named like a stub (service Req_Echo's proxy
// type Req_EchoProxy) is refused, naming both, or builds. check() did not know the wrapper types:
// the plugin wrote Go that did not compile ("Req_EchoProxy redeclared").
func TestProtoOneofWrapperNamedLikeProxy(t *testing.T) {
	fd := fileWith(&descriptorpb.ServiceDescriptorProto{
		Name:   proto.String("Req_Echo"),
		Method: []*descriptorpb.MethodDescriptorProto{unaryMethod("Get")},
	})
	fd.MessageType = []*descriptorpb.DescriptorProto{{
		Name: proto.String("Req"),
		Field: []*descriptorpb.FieldDescriptorProto{{
			Name:       proto.String("echo_proxy"),
			Number:     proto.Int32(1),
			Label:      descriptorpb.FieldDescriptorProto_LABEL_OPTIONAL.Enum(),
			Type:       descriptorpb.FieldDescriptorProto_TYPE_STRING.Enum(),
			JsonName:   proto.String("echoProxy"),
			OneofIndex: proto.Int32(0),
		}},
		OneofDecl: []*descriptorpb.OneofDescriptorProto{{Name: proto.String("kind")}},
	}}
	expectRefusedOrBuilds(t, fd)
}

// TestProtoEnumValueNamedLikeProxy: the same for enum values, which protoc-gen-go declares as
// top-level constants (enum Req's value EchoProxy is the constant Req_EchoProxy).
func TestProtoEnumValueNamedLikeProxy(t *testing.T) {
	fd := fileWith(&descriptorpb.ServiceDescriptorProto{
		Name:   proto.String("Req_Echo"),
		Method: []*descriptorpb.MethodDescriptorProto{unaryMethod("Get")},
	})
	fd.EnumType = []*descriptorpb.EnumDescriptorProto{{
		Name: proto.String("Req"),
		Value: []*descriptorpb.EnumValueDescriptorProto{
			{Name: proto.String("ZERO"), Number: proto.Int32(0)},
			{Name: proto.String("EchoProxy"), Number: proto.Int32(1)},
		},
	}}
	expectRefusedOrBuilds(t, fd)
}
