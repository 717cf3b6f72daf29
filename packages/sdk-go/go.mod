module github.com/mesh/mesh-state/packages/sdk-go

go 1.23
