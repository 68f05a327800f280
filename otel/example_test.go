package tarsotel_test

import (
	"context"
	"fmt"
	"net"
	"time"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"

	"github.com/tarscomm/tarscomm/communicator"
	"github.com/tarscomm/tarscomm/conf"
	"github.com/tarscomm/tarscomm/examples/hello/hellopb"
	tarsotel "github.com/tarscomm/tarscomm/otel"
	"github.com/tarscomm/tarscomm/server"
)

// A call traced on both sides: the client's span, and the server's as its child. A program would
// give the TracerProvider an exporter of its own (OTLP, ...) or leave Options empty to use the
// global one.
func Example() {
	exp := tracetest.NewInMemoryExporter()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSyncer(exp))
	defer tp.Shutdown(context.Background())
	o := tarsotel.Options{TracerProvider: tp}

	srv := server.New(server.WithNumEventLoop(1), server.WithInterceptor(tarsotel.ServerInterceptor(o)))
	err := server.HandleProto(srv, "Hello.Server.GreeterObj", "SayHello",
		func(_ context.Context, _ *server.Current, req *hellopb.HelloRequest) (*hellopb.HelloReply, error) {
			return &hellopb.HelloReply{Message: "hello " + req.GetName()}, nil
		})
	if err != nil {
		fmt.Println(err)
		return
	}
	addr, err := srv.Start("127.0.0.1:0")
	if err != nil {
		fmt.Println(err)
		return
	}
	defer func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = srv.Stop(ctx)
	}()

	comm, err := communicator.New(conf.Default(), communicator.WithInterceptor(tarsotel.ClientInterceptor(o)))
	if err != nil {
		fmt.Println(err)
		return
	}
	defer comm.Close()
	prx := new(hellopb.GreeterProxy)
	proxy := fmt.Sprintf("Hello.Server.GreeterObj@tcp -h 127.0.0.1 -p %d", addr.(*net.TCPAddr).Port)
	if err := comm.StringToProxy(proxy, prx); err != nil {
		fmt.Println(err)
		return
	}
	if _, err := prx.SayHello(context.Background(), &hellopb.HelloRequest{Name: "otel"}); err != nil {
		fmt.Println(err)
		return
	}

	byKind := map[trace.SpanKind]tracetest.SpanStub{}
	for _, s := range exp.GetSpans() {
		byKind[s.SpanKind] = s
	}
	cspan, sspan := byKind[trace.SpanKindClient], byKind[trace.SpanKindServer]
	fmt.Println("client:", cspan.Name)
	fmt.Println("server:", sspan.Name, "child of the client's span:", sspan.Parent.SpanID() == cspan.SpanContext.SpanID())
	// Output:
	// client: Hello.Server.GreeterObj/SayHello
	// server: Hello.Server.GreeterObj/SayHello child of the client's span: true
}
