package main

import (
	"flag"
	"fmt"
	"os"

	"google.golang.org/protobuf/compiler/protogen"
)

// version is written into the header of generated files.
const version = "v0.1.0"

func main() {
	showVersion := flag.Bool("version", false, "print the version and exit")
	flag.Parse()
	if *showVersion {
		fmt.Printf("protoc-gen-go-tars %s\n", version)
		os.Exit(0)
	}
	// Only protogen's own parameters (paths, module, M...): an unknown one (a typo) is an error.
	protogen.Options{ParamFunc: func(name, _ string) error {
		return fmt.Errorf("unknown parameter %q: protoc-gen-go-tars takes paths, module and M<file>=<import path>", name)
	}}.Run(generate)
}
