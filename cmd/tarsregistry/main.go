// Command tarsregistry is a small TARS registry for development and tests (package devregistry):
// it serves QueryF (tars.tarsregistry.QueryObj) from a TOML file or a directory of naming files,
// plus the endpoints servers register over HTTP. It is not the TARS framework's registry.
//
//	tarsregistry -file registry.toml                 # QueryF on 127.0.0.1:17890, HTTP on 127.0.0.1:17891
//	locator = "tars.tarsregistry.QueryObj@tcp -h 127.0.0.1 -p 17890"   # in a client's TOML
//	curl -X POST 'http://127.0.0.1:17891/register?obj=App.Server.EchoObj&ttl=10s' \
//	     --data-urlencode 'endpoint=tcp -h 127.0.0.1 -p 9000'
package main

import (
	"context"
	"flag"
	"fmt"
	"log"
	"os"
	"os/signal"
	"syscall"
	"time"

	"go.uber.org/zap"

	"github.com/tarscomm/tarscomm/devregistry"
)

func main() {
	var o devregistry.Options
	flag.StringVar(&o.File, "file", "", "a .toml file or a directory of naming files (see package devregistry); empty: registrations only")
	flag.StringVar(&o.QueryAddr, "listen", "127.0.0.1:17890", "host:port of QueryF")
	flag.StringVar(&o.HTTPAddr, "http", "127.0.0.1:17891", "host:port of the HTTP registration interface; empty: none")
	flag.StringVar(&o.Servant, "servant", devregistry.DefaultServant, "object name of QueryF")
	flag.DurationVar(&o.Reload, "reload", time.Second, "how often the file is read again")
	flag.Parse()
	if flag.NArg() > 0 {
		log.Fatalf("tarsregistry: unexpected argument %q (a file is given with -file)", flag.Arg(0))
	}
	if o.Reload <= 0 {
		log.Fatalf("tarsregistry: -reload %v: must be positive", o.Reload)
	}
	// Before anything is started or printed: a signal sent as soon as the locator line appears
	// stops the registry cleanly (a shell's background job ignores SIGINT until this).
	sig := make(chan os.Signal, 1)
	signal.Notify(sig, syscall.SIGINT, syscall.SIGTERM)
	zc := zap.NewDevelopmentConfig()
	zc.Level = zap.NewAtomicLevelAt(zap.InfoLevel)
	zc.DisableStacktrace = true // a reload warning is one line, not a stack
	lg, err := zc.Build()
	if err != nil {
		log.Fatal(err)
	}
	o.Log = lg
	r, err := devregistry.Start(o)
	if err != nil {
		log.Fatalf("tarsregistry: %v", err)
	}
	fmt.Printf("tarsregistry: locator = %q\n", r.Locator())
	if u := r.HTTPURL(); u != "" {
		fmt.Printf("tarsregistry: registrations at %s/register, lists at %s/objects\n", u, u)
	}
	<-sig
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := r.Close(ctx); err != nil {
		log.Fatalf("tarsregistry: %v", err)
	}
}
