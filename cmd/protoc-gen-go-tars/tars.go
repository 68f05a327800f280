package main

import (
	"fmt"
	"strings"

	"google.golang.org/protobuf/compiler/protogen"
	"google.golang.org/protobuf/types/descriptorpb"
	"google.golang.org/protobuf/types/pluginpb"
)

// The packages generated code refers to.
const (
	contextPkg      = protogen.GoImportPath("context")
	errorsPkg       = protogen.GoImportPath("errors")
	syncPkg         = protogen.GoImportPath("sync")
	codecPkg        = protogen.GoImportPath("github.com/tarscomm/tarscomm/codec")
	servantproxyPkg = protogen.GoImportPath("github.com/tarscomm/tarscomm/servantproxy")
	serverPkg       = protogen.GoImportPath("github.com/tarscomm/tarscomm/server")
	futurePkg       = protogen.GoImportPath("github.com/tarscomm/tarscomm/future")
)

// fileSuffix replaces ".proto" in the name of the generated file.
const fileSuffix = "_tars.pb.go"

// generate writes a _tars.pb.go file for every file to generate that declares a service.
func generate(gen *protogen.Plugin) error {
	gen.SupportedFeatures = uint64(pluginpb.CodeGeneratorResponse_FEATURE_PROTO3_OPTIONAL |
		pluginpb.CodeGeneratorResponse_FEATURE_SUPPORTS_EDITIONS)
	gen.SupportedEditionsMinimum = descriptorpb.Edition_EDITION_PROTO2
	gen.SupportedEditionsMaximum = descriptorpb.Edition_EDITION_2024
	for _, f := range gen.Files {
		if !f.Generate || len(f.Services) == 0 {
			continue
		}
		if err := check(f, samePackage(gen, f)); err != nil {
			return err
		}
		generateFile(gen, f)
	}
	return nil
}

// stubNames are the top-level Go names generated for service s.
func stubNames(s *protogen.Service) []string {
	stubs := []string{proxyName(s), "New" + proxyName(s), serverName(s), "Unimplemented" + serverName(s), "Register" + s.GoName}
	for _, m := range s.Methods {
		stubs = append(stubs, asyncName(m), asyncName(m)+"Pool")
	}
	return stubs
}

// samePackage returns the other files of f's Go package (its messages, and the stubs of those
// generated, are declared beside f's).
func samePackage(gen *protogen.Plugin, f *protogen.File) []*protogen.File {
	var out []*protogen.File
	for _, o := range gen.Files {
		if o != f && o.GoImportPath == f.GoImportPath {
			out = append(out, o)
		}
	}
	return out
}

// check refuses what TARS cannot express or what would not compile: streaming methods, and
// generated identifiers that collide (a method Foo's AsyncFoo with a method AsyncFoo; a
// message FooProxy with service Foo's proxy type, in f or in another file of its Go package,
// others).
func check(f *protogen.File, others []*protogen.File) error {
	// The package's top-level Go names, as protoc-gen-go declares them: the messages, enums,
	// enum values (Enum_VALUE constants) and oneof wrappers (Message_Field types) of f and of the
	// other files of its package, and the stubs of their services; then f's stubs'.
	top := map[string]string{}
	addEnum := func(e *protogen.Enum) {
		top[e.GoIdent.GoName] = "enum " + string(e.Desc.FullName())
		for _, v := range e.Values {
			top[v.GoIdent.GoName] = "enum value " + string(v.Desc.FullName())
		}
	}
	var addTypes func(ms []*protogen.Message)
	addTypes = func(ms []*protogen.Message) {
		for _, m := range ms {
			top[m.GoIdent.GoName] = "message " + string(m.Desc.FullName())
			for _, e := range m.Enums {
				addEnum(e)
			}
			for _, o := range m.Oneofs {
				for _, fl := range o.Fields {
					top[fl.GoIdent.GoName] = "oneof field " + string(fl.Desc.FullName())
				}
			}
			addTypes(m.Messages)
		}
	}
	for _, o := range append(others, f) {
		addTypes(o.Messages)
		for _, e := range o.Enums {
			addEnum(e)
		}
	}
	for _, o := range others {
		if !o.Generate {
			continue
		}
		for _, s := range o.Services {
			for _, name := range stubNames(s) {
				top[name] = "a stub of service " + string(s.Desc.FullName()) + " (" + o.Desc.Path() + ")"
			}
		}
	}
	for _, s := range f.Services {
		for _, name := range stubNames(s) {
			if prev, dup := top[name]; dup {
				return fmt.Errorf("%s: service %s: generated identifier %s collides with %s",
					f.Desc.Path(), s.Desc.FullName(), name, prev)
			}
			top[name] = "a stub of service " + string(s.Desc.FullName())
		}
	}
	for _, s := range f.Services {
		names := map[string]string{
			"SetServantProxy": "the Setter method",
			"ServantProxy":    "the ServantProxy accessor",
			"SetPushCallback": "the push callback's setter",
		}
		for _, m := range s.Methods {
			if m.Desc.IsStreamingClient() || m.Desc.IsStreamingServer() {
				return fmt.Errorf("%s: method %s is a streaming method: TARS has no streaming calls",
					f.Desc.Path(), m.Desc.FullName())
			}
			for _, name := range []string{m.GoName, "Async" + m.GoName, "Oneway" + m.GoName, "Future" + m.GoName} {
				if prev, dup := names[name]; dup {
					return fmt.Errorf("%s: method %s: generated method %s.%s collides with %s",
						f.Desc.Path(), m.Desc.FullName(), proxyName(s), name, prev)
				}
				names[name] = "the stub of method " + string(m.Desc.FullName())
			}
		}
	}
	return nil
}

func proxyName(s *protogen.Service) string { return s.GoName + "Proxy" }

func serverName(s *protogen.Service) string { return s.GoName + "Server" }

// asyncName is the unexported type that carries an async call of m to its callback. The
// underscores of the service's and method's names are doubled, so that A.B_C and A_B.C do not
// both make _A_B_C_async.
func asyncName(m *protogen.Method) string {
	return "_" + strings.ReplaceAll(m.Parent.GoName, "_", "__") + "_" + strings.ReplaceAll(m.GoName, "_", "__") + "_async"
}

// generateFile writes the stubs of f's services.
func generateFile(gen *protogen.Plugin, f *protogen.File) {
	g := gen.NewGeneratedFile(f.GeneratedFilenamePrefix+fileSuffix, f.GoImportPath)
	g.P("// Code generated by protoc-gen-go-tars. DO NOT EDIT.")
	g.P("// versions:")
	g.P("// \tprotoc-gen-go-tars ", version)
	g.P("// \tprotoc             ", protocVersion(gen))
	g.P("// source: ", f.Desc.Path())
	g.P()
	g.P("package ", f.GoPackageName)
	g.P()
	for _, s := range f.Services {
		genProxy(g, s)
		genServer(g, s)
	}
}

func protocVersion(gen *protogen.Plugin) string {
	v := gen.Request.GetCompilerVersion()
	if v == nil {
		return "(unknown)"
	}
	s := fmt.Sprintf("v%d.%d.%d", v.GetMajor(), v.GetMinor(), v.GetPatch())
	if suffix := v.GetSuffix(); suffix != "" {
		s += "-" + suffix
	}
	return s
}

// comments writes c (a proto comment) as more paragraphs of a doc comment, after an empty
// comment line.
func comments(g *protogen.GeneratedFile, c protogen.Comments) {
	if strings.TrimSpace(string(c)) == "" {
		return
	}
	g.P("//")
	commentLines(g, c)
}

// commentLines writes the lines of c as comment lines.
func commentLines(g *protogen.GeneratedFile, c protogen.Comments) {
	for line := range strings.SplitSeq(strings.TrimSpace(string(c)), "\n") {
		g.P(strings.TrimRight("// "+strings.TrimPrefix(line, " "), " "))
	}
}

func deprecated(g *protogen.GeneratedFile, m *protogen.Method) {
	if m.Desc.Options().(*descriptorpb.MethodOptions).GetDeprecated() {
		g.P("//")
		g.P("// Deprecated: Do not use.")
	}
}

// idempotentCall returns the statement marking s's idempotent methods on a ServantProxy sp, ""
// when it has none: the methods whose .proto says option idempotency_level = IDEMPOTENT or
// NO_SIDE_EFFECTS may be sent twice (backup requests, when the servant has backup-request set).
func idempotentCall(s *protogen.Service) string {
	var names []string
	for _, m := range s.Methods {
		switch m.Desc.Options().(*descriptorpb.MethodOptions).GetIdempotencyLevel() {
		case descriptorpb.MethodOptions_IDEMPOTENT, descriptorpb.MethodOptions_NO_SIDE_EFFECTS:
			names = append(names, fmt.Sprintf("%q", string(m.Desc.Name())))
		}
	}
	if len(names) == 0 {
		return ""
	}
	return "sp.MarkIdempotent(" + strings.Join(names, ", ") + ")"
}

func genProxy(g *protogen.GeneratedFile, s *protogen.Service) {
	proxy := proxyName(s)
	sp := g.QualifiedGoIdent(servantproxyPkg.Ident("ServantProxy"))
	callOption := g.QualifiedGoIdent(servantproxyPkg.Ident("CallOption"))
	ctx := g.QualifiedGoIdent(contextPkg.Ident("Context"))

	g.P("// ", proxy, " calls the ", s.Desc.FullName(), " service, a TARS servant with protobuf bodies.")
	g.P("// Bind it to a servant with Communicator.StringToProxy, or wrap a ServantProxy with")
	g.P("// New", proxy, "; an unbound ", proxy, " must not be called. It is safe for concurrent use.")
	comments(g, s.Comments.Leading)
	if s.Desc.Options().(*descriptorpb.ServiceOptions).GetDeprecated() {
		g.P("//")
		g.P("// Deprecated: Do not use.")
	}
	g.P("type ", proxy, " struct {")
	g.P("sp *", sp)
	g.P("}")
	g.P()
	g.P("var _ ", servantproxyPkg.Ident("Setter"), " = (*", proxy, ")(nil)")
	g.P()
	g.P("// New", proxy, " returns a proxy that calls through sp.")
	idem := idempotentCall(s)
	g.P("func New", proxy, "(sp *", sp, ") *", proxy, " {")
	if idem != "" {
		g.P(idem)
	}
	g.P("return &", proxy, "{sp: sp}")
	g.P("}")
	g.P()
	g.P("// SetServantProxy binds p to sp; Communicator.StringToProxy calls it.")
	if idem == "" {
		g.P("func (p *", proxy, ") SetServantProxy(sp *", sp, ") { p.sp = sp }")
	} else {
		g.P("// The methods marked idempotent in the .proto may have backup requests.")
		g.P("func (p *", proxy, ") SetServantProxy(sp *", sp, ") {")
		g.P(idem)
		g.P("p.sp = sp")
		g.P("}")
	}
	g.P()
	g.P("// ServantProxy returns the untyped proxy p calls through, nil while p is unbound.")
	g.P("func (p *", proxy, ") ServantProxy() *", sp, " { return p.sp }")
	g.P()
	g.P("// SetPushCallback makes cb receive what the servant pushes on p's connections, and their")
	g.P("// connects and closes; nil stops it (see servantproxy.ServantProxy.SetPushCallback).")
	g.P("func (p *", proxy, ") SetPushCallback(cb *", g.QualifiedGoIdent(servantproxyPkg.Ident("PushCallback")), ") { p.sp.SetPushCallback(cb) }")
	g.P()

	for _, m := range s.Methods {
		fn := string(m.Desc.Name())
		in := g.QualifiedGoIdent(m.Input.GoIdent)
		out := g.QualifiedGoIdent(m.Output.GoIdent)
		async := asyncName(m)

		// The methods' locals and parameters give way to the reply's package, whose name is
		// the import path's last element (".../a" is a): a local a would hide it in new(a.Reply).
		l := localsAvoiding(out)

		// Sync.
		g.P("// ", m.GoName, " calls the servant's ", fmt.Sprintf("%q", fn), " and waits for its reply, until the")
		g.P("// earlier of ctx's deadline and the sync invoke timeout.")
		comments(g, m.Comments.Leading)
		deprecated(g, m)
		g.P("func (", l.p, " *", proxy, ") ", m.GoName, "(", l.ctx, " ", ctx, ", ", l.req, " *", in, ", ", l.opts, " ...", callOption, ") (*", out, ", error) {")
		g.P(l.rsp, " := new(", out, ")")
		g.P("if ", l.err, " := ", l.p, ".sp.Invoke(", l.ctx, ", ", fmt.Sprintf("%q", fn), ", ", l.req, ", ", l.rsp, ", ", l.opts, "...); ", l.err, " != nil {")
		g.P("return nil, ", l.err)
		g.P("}")
		g.P("return ", l.rsp, ", nil")
		g.P("}")
		g.P()

		// Async.
		g.P("// Async", m.GoName, " sends a ", fn, " call and returns at once. cb runs on one of the")
		g.P("// Communicator's async workers with the reply or the call's error: exactly once if")
		g.P("// Async", m.GoName, " returns nil, never if it returns an error. The deadline is the earlier")
		g.P("// of ctx's and the async invoke timeout.")
		deprecated(g, m)
		g.P("func (", l.p, " *", proxy, ") Async", m.GoName, "(", l.ctx, " ", ctx, ", ", l.req, " *", in, ", ", l.cb, " func(*", out, ", error), ", l.opts, " ...", callOption, ") error {")
		g.P("if ", l.cb, " == nil {")
		g.P("return ", errorsPkg.Ident("New"), "(", fmt.Sprintf("%q", "tarscomm: "+proxy+".Async"+m.GoName+": nil callback"), ")")
		g.P("}")
		g.P(l.a, ", _ := ", async, "Pool.Get().(*", async, ")")
		g.P("if ", l.a, " == nil {")
		g.P(l.a, " = new(", async, ")")
		g.P(l.a, ".done = ", l.a, ".finish")
		g.P("}")
		g.P(l.a, ".rsp, ", l.a, ".cb = new(", out, "), ", l.cb)
		g.P("if ", l.err, " := ", l.p, ".sp.AsyncInvoke(", l.ctx, ", ", fmt.Sprintf("%q", fn), ", ", l.req, ", ", l.a, ".rsp, ", l.a, ".done, ", l.opts, "...); ", l.err, " != nil {")
		g.P(l.a, ".rsp, ", l.a, ".cb = nil, nil")
		g.P(async, "Pool.Put(", l.a, ")")
		g.P("return ", l.err)
		g.P("}")
		g.P("return nil")
		g.P("}")
		g.P()

		// One-way.
		g.P("// Oneway", m.GoName, " sends ", fn, " as a one-way call: the server runs it and sends no reply.")
		g.P("// It returns once the request is written to a connection, or with the error that")
		g.P("// prevented it.")
		deprecated(g, m)
		g.P("func (p *", proxy, ") Oneway", m.GoName, "(ctx ", ctx, ", req *", in, ", opts ...", callOption, ") error {")
		g.P("return p.sp.InvokeOneway(ctx, ", fmt.Sprintf("%q", fn), ", req, opts...)")
		g.P("}")
		g.P()

		// Future.
		fut := g.QualifiedGoIdent(futurePkg.Ident("Future"))
		g.P("// Future", m.GoName, " sends a ", fn, " call and returns at once a future of its reply,")
		g.P("// completed on one of the Communicator's async workers (no goroutine per call). A call")
		g.P("// that cannot be sent completes the future at once with its error.")
		deprecated(g, m)
		g.P("func (", l.p, " *", proxy, ") Future", m.GoName, "(", l.ctx, " ", ctx, ", ", l.req, " *", in, ", ", l.opts, " ...", callOption, ") *", fut, "[*", out, "] {")
		g.P(l.f, " := ", servantproxyPkg.Ident("NewCallFuture"), "[*", out, "](", l.p, ".sp, ctx)")
		g.P(l.rsp, " := new(", out, ")")
		g.P(l.err, " := ", l.p, ".sp.AsyncInvoke(", l.ctx, ", ", fmt.Sprintf("%q", fn), ", ", l.req, ", ", l.rsp, ", func(", l.err, " error) {")
		g.P("if ", l.err, " != nil {")
		g.P(l.f, ".Complete(nil, ", l.err, ")")
		g.P("return")
		g.P("}")
		g.P(l.f, ".Complete(", l.rsp, ", nil)")
		g.P("}, ", l.opts, "...)")
		g.P("if ", l.err, " != nil {")
		g.P(l.f, ".Complete(nil, ", l.err, ")")
		g.P("}")
		g.P("return ", l.f)
		g.P("}")
		g.P()

		// The pooled carrier of async calls: an async call allocates only its reply.
		g.P("// ", async, " carries one Async", m.GoName, " call to its callback. Carriers are pooled")
		g.P("// and their done func is bound once, so that an async call allocates only its reply.")
		g.P("type ", async, " struct {")
		g.P("rsp *", out)
		g.P("cb func(*", out, ", error)")
		g.P("done func(error) // finish, bound once")
		g.P("}")
		g.P()
		g.P("var ", async, "Pool ", syncPkg.Ident("Pool"))
		g.P()
		g.P("func (a *", async, ") finish(err error) {")
		g.P("rsp, cb := a.rsp, a.cb")
		g.P("a.rsp, a.cb = nil, nil")
		g.P(async, "Pool.Put(a)")
		g.P("if err != nil {")
		g.P("cb(nil, err)")
		g.P("return")
		g.P("}")
		g.P("cb(rsp, nil)")
		g.P("}")
		g.P()
	}
}

func genServer(g *protogen.GeneratedFile, s *protogen.Service) {
	iface := serverName(s)
	ctx := g.QualifiedGoIdent(contextPkg.Ident("Context"))
	current := g.QualifiedGoIdent(serverPkg.Ident("Current"))
	srv := g.QualifiedGoIdent(serverPkg.Ident("Server"))

	g.P("// ", iface, " is the server side of the ", s.Desc.FullName(), " service: serve an")
	g.P("// implementation with Register", s.GoName, ". Each method gets the request's Current (context")
	g.P("// and status maps, client timeout; it may set the reply's maps) and answers with its reply or")
	g.P("// an error: a *server.Error gives the TARS return code and description.")
	comments(g, s.Comments.Leading)
	g.P("type ", iface, " interface {")
	for i, m := range s.Methods {
		if i > 0 {
			g.P()
		}
		if strings.TrimSpace(string(m.Comments.Leading)) != "" {
			commentLines(g, m.Comments.Leading)
		} else {
			g.P("// ", m.GoName, " serves function ", fmt.Sprintf("%q", string(m.Desc.Name())), ".")
		}
		deprecated(g, m)
		g.P(m.GoName, "(ctx ", ctx, ", cur *", current, ", req *", g.QualifiedGoIdent(m.Input.GoIdent), ") (*", g.QualifiedGoIdent(m.Output.GoIdent), ", error)")
	}
	g.P("}")
	g.P()

	unimpl := "Unimplemented" + iface
	g.P("// ", unimpl, " answers every method with codec.RetNoFunc. Embed it in an implementation")
	g.P("// of ", iface, " so that methods added to the service later compile and answer as unknown")
	g.P("// functions until they are implemented.")
	g.P("type ", unimpl, " struct{}")
	g.P()
	for _, m := range s.Methods {
		g.P("// ", m.GoName, " answers codec.RetNoFunc.")
		g.P("func (", unimpl, ") ", m.GoName, "(", ctx, ", *", current, ", *", g.QualifiedGoIdent(m.Input.GoIdent), ") (*", g.QualifiedGoIdent(m.Output.GoIdent), ", error) {")
		g.P("return nil, &", serverPkg.Ident("Error"), "{Code: ", codecPkg.Ident("RetNoFunc"), ", Desc: ", fmt.Sprintf("%q", "method "+m.GoName+" not implemented"), "}")
		g.P("}")
		g.P()
	}

	g.P("// Register", s.GoName, " registers impl as servant (a TARS object name such as")
	g.P("// \"App.Server.", s.GoName, "Obj\") on s: each method of ", iface, " serves the function of the same")
	g.P("// name, with protobuf bodies. Call it before s.Start.")
	g.P("func Register", s.GoName, "(s *", srv, ", servant string, impl ", iface, ") error {")
	g.P("if impl == nil {")
	g.P("return ", errorsPkg.Ident("New"), "(", fmt.Sprintf("%q", "tarscomm: Register"+s.GoName+": nil implementation"), ")")
	g.P("}")
	for _, m := range s.Methods {
		g.P("if err := ", serverPkg.Ident("HandleProto"), "(s, servant, ", fmt.Sprintf("%q", string(m.Desc.Name())), ", impl.", m.GoName, "); err != nil {")
		g.P("return err")
		g.P("}")
	}
	g.P("return nil")
	g.P("}")
	g.P()
}

// locals are the names of a proxy method's receiver, parameters and locals.
type locals struct{ p, ctx, req, opts, cb, rsp, err, a, f string }

// localsAvoiding returns the locals of a method whose body names the qualified identifier
// ident ("a.Reply", or "Reply" in the file's own package): each is the usual name, or that name
// with an underscore added when it is ident's package name, which the local would hide.
func localsAvoiding(ident string) locals {
	pkg, _, qualified := strings.Cut(ident, ".")
	pick := func(name string) string {
		if qualified && name == pkg {
			return name + "_"
		}
		return name
	}
	return locals{p: pick("p"), ctx: pick("ctx"), req: pick("req"), opts: pick("opts"), cb: pick("cb"),
		rsp: pick("rsp"), err: pick("err"), a: pick("a"), f: pick("f")}
}
