import Foundation
import Logging
import NIOPosix
import ServiceLifecycle
import SmartStackServer

/// varlink-certification server --varlink=unix:PATH   serves org.varlink.certification until SIGTERM/SIGINT
/// varlink-certification client --varlink=unix:PATH   runs the certification sequence against a server
///
/// Test-only (Tests/e2e/test_certification.py): the reference implementation's suite,
/// `python3 -m varlink.tests.test_certification`, is the other side each way.
let usage = "usage: varlink-certification (server|client) --varlink=unix:PATH"
let arguments = CommandLine.arguments.dropFirst()
guard arguments.count == 2, let mode = arguments.first, ["server", "client"].contains(mode),
    let address = arguments.last, address.hasPrefix("--varlink=unix:")
else {
    FileHandle.standardError.write(Data((usage + "\n").utf8))
    exit(64)
}
let path = String(address.dropFirst("--varlink=unix:".count))

do {
    if mode == "client" {
        try await CertificationClient.run(path: path)
    } else {
        var logger = Logger(label: "varlink-certification")
        logger.logLevel = .notice
        let listener = VarlinkListener(
            target: .path(path), handler: try CertificationService(), connections: ConnectionRegistry(limit: 64),
            maxFrameSize: 16 << 20, logger: logger, eventLoop: MultiThreadedEventLoopGroup.singleton.next(),
            onListening: {
                print("Listening on unix:\(path)")
                fflush(nil)
            })
        let group = ServiceGroup(
            configuration: .init(
                services: [.init(service: listener)], gracefulShutdownSignals: [.sigterm, .sigint], logger: logger))
        try await group.run()
    }
} catch {
    FileHandle.standardError.write(Data("varlink-certification \(mode): \(error)\n".utf8))
    exit(1)
}
