// Command tarsgo-server is a real TarsGo v1.4.6 server for the interop tests: it serves the
// protobuf service echopb.Echo as <app>.<server>.EchoPbObj and the .tars interface EchoTars as
// <app>.<server>.EchoTarsObj, on the endpoints of a TarsGo configuration file, until it is
// killed.
//
//	tarsgo-server -config server.conf -id a
//
// The tests write the configuration with ports chosen at run time on 127.0.0.1.
package main

import (
	"flag"
	"fmt"
	"os"

	"github.com/TarsCloud/TarsGo/tars"

	"github.com/tarscomm/tarscomm/interop/internal/tarsgoecho"
)

func main() {
	config := flag.String("config", "", "TarsGo server configuration file")
	id := flag.String("id", "tarsgo", "server id that Inspect reports")
	flag.Parse()
	if *config == "" {
		fmt.Fprintln(os.Stderr, "tarsgo-server: -config is required")
		os.Exit(2)
	}
	// Set before TarsGo reads its configuration, so that it does not parse os.Args itself.
	tars.ServerConfigPath = *config
	cfg := tars.GetServerConfig()
	prefix := cfg.App + "." + cfg.Server + "."
	tars.AddServantWithContext(new(tarsgoecho.EchoPb), &tarsgoecho.EchoPbImp{ID: *id}, prefix+"EchoPbObj")
	tars.AddServantWithContext(new(tarsgoecho.EchoTars), new(tarsgoecho.EchoTars), prefix+"EchoTarsObj")
	fmt.Println("tarsgo-server: serving", prefix+"EchoPbObj", "and", prefix+"EchoTarsObj")
	tars.Run()
}
