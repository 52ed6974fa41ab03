// swift-tools-version:6.0
// ScaryBugs as an app developer writes it for AppHome: its own Swift code, with
// AppHome as a versioned dependency like any other package.
import PackageDescription

// AppHome by URL and version. In this checkout, the URL is the tagged clone
// scripts/versioned-apphome.sh makes of it (build.sh runs it first); a project
// of its own would name AppHome's published repository instead.
let checkout = Context.packageDirectory.split(separator: "/").dropLast(2).joined(separator: "/")
let appHome = "file:///\(checkout)/.build/versioned-client/AppHome"

let package = Package(
    name: "ScaryBugs",
    dependencies: [.package(url: appHome, from: "0.1.0")],
    targets: [
        .executableTarget(name: "ScaryBugs", dependencies: [
            .product(name: "KeyedArchive", package: "AppHome"),
            .product(name: "PropertyList", package: "AppHome"),
            .product(name: "Security", package: "AppHome"),
        ]),
    ]
)
