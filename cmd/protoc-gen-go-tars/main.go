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
	protogen.Options{}.Run(generate)
}
