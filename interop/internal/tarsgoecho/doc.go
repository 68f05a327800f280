// Package tarsgoecho holds the TarsGo side of the interop tests' servants, written by hand
// against TarsGo's public API as TarsGo's code generators would write them (their tools are
// not served by the module proxy): a dispatcher type with the Dispatch method that
// tars.AddServantWithContext takes, switching on sFuncName, and an implementation type.
//
//   - EchoPb serves the protobuf service echopb.Echo, as TarsGo's protobuf plugin does:
//     sBuffer is the marshalled request, the reply's sBuffer the marshalled response, an
//     unknown function or an error answers with iRet 1 (or a *tars.Error's code) and the
//     error's text as description.
//   - EchoTars serves the .tars interface of package tarsidl, as tars2go does, with TarsGo's
//     codec.
//
// It runs in cmd/tarsgo-server, never in the test process: TarsGo keeps process-wide state.
package tarsgoecho
