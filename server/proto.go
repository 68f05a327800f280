package server

import (
	"context"

	"google.golang.org/protobuf/proto"

	"github.com/tarscomm/tarscomm/codec"
)

// HandleProto registers h as function fn of servant for a protobuf service: the request body
// is unmarshalled into a new Req (a body that does not unmarshal is answered with
// codec.RetServerDecode and the protobuf error as description), and the reply h returns is
// marshalled as the reply body (a marshal error answers codec.RetServerEncode). An error from
// h is answered as for a HandlerFunc. It returns Handle's error.
//
// The type parameters are inferred from h:
//
//	err := server.HandleProto(s, "Hello.Server.GreeterObj", "SayHello",
//		func(ctx context.Context, cur *server.Current, req *hellopb.HelloRequest) (*hellopb.HelloReply, error) {
//			return &hellopb.HelloReply{Message: "hello " + req.GetName()}, nil
//		})
func HandleProto[Req, Rsp any, PReq interface {
	*Req
	proto.Message
}, PRsp interface {
	*Rsp
	proto.Message
}](s *Server, servant, fn string, h func(ctx context.Context, cur *Current, req PReq) (PRsp, error)) error {
	if h == nil {
		return s.Handle(servant, fn, nil)
	}
	return s.Handle(servant, fn, func(ctx context.Context, cur *Current, body, rsp []byte) ([]byte, error) {
		req := PReq(new(Req))
		if err := proto.Unmarshal(body, req); err != nil {
			return nil, &Error{Code: codec.RetServerDecode, Desc: err.Error()}
		}
		out, err := h(ctx, cur, req)
		if err != nil {
			return nil, err
		}
		b, err := proto.MarshalOptions{}.MarshalAppend(rsp, out)
		if err != nil {
			return nil, &Error{Code: codec.RetServerEncode, Desc: err.Error()}
		}
		return b, nil
	})
}
