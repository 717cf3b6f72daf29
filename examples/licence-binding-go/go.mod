module github.com/mesh/mesh-state/examples/licence-binding-go

go 1.23

require github.com/mesh/mesh-state/packages/sdk-go v0.0.0

// In this repository the SDK is a folder away; a module outside it requires a tagged version instead.
replace github.com/mesh/mesh-state/packages/sdk-go => ../../packages/sdk-go
