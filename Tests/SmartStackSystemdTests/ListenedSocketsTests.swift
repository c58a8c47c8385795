import Foundation
import SmartStackSystemd
import SystemPackage
import Testing

@Suite struct ListenedSocketsTests {
    private func sockets(_ names: String...) -> ListenedSockets {
        ListenedSockets(
            names.enumerated().map {
                ListenedSocket(descriptor: FileDescriptor(rawValue: 3 + Int32($0.offset)), name: $0.element)
            })
    }

    @Test func varlinkIsFoundByName() {
        let passed = sockets("metrics", "varlink")
        #expect(passed.varlink?.descriptor.rawValue == 4)
        #expect(passed.named("metrics")?.descriptor.rawValue == 3)
        #expect(passed.named("other") == nil)
    }

    @Test(arguments: ["unknown", "smartstackd.socket"])
    func aSingleUnnamedSocketIsTheVarlinkSocket(_ name: String) {
        #expect(sockets(name).varlink?.descriptor.rawValue == 3)
    }

    @Test func noVarlinkSocketAmongOthers() {
        #expect(sockets("metrics").varlink == nil)
        #expect(sockets("unknown", "unknown").varlink == nil)
        #expect(sockets().varlink == nil)
        #expect(sockets().isEmpty)
    }
}

/// `ListenedSockets.take()` in the probe, started by `systemd-socket-activate` as systemd would.
@Suite(
    .timeLimit(.minutes(1)),
    .enabled(if: TestEnvironment.probe != nil, "needs smartstack-systemd-probe: swift build --build-tests"),
    .enabled(
        if: TestEnvironment.tool("systemd-socket-activate") != nil, "needs systemd-socket-activate (package systemd)")
)
struct SocketActivationTests {
    /// Starts `systemd-socket-activate` on `paths` with `extra` options, connects to `connectTo`,
    /// and returns what the probe wrote on the connection and on stdout.
    private func activate(_ paths: [String], _ extra: [String], connectTo: String, in directory: TemporaryDirectory)
        throws -> (reply: String, output: String)
    {
        let probe = try #require(TestEnvironment.probe)
        let tool = try #require(TestEnvironment.tool("systemd-socket-activate"))
        let child = try ChildProcess(
            tool, paths.flatMap { ["-l", $0] } + extra + [probe, "listen"],
            environment: TestEnvironment.cleanEnvironment(), in: directory.url
        )
        guard paths.allSatisfy({ waitForFile($0) }) else {
            let result = child.wait(timeout: .zero)
            Issue.record("systemd-socket-activate did not listen: \(result.errorOutput)")
            return ("", "")
        }
        // The socket file exists from bind(); until listen() a connection is refused: retry briefly.
        var reply = ""
        let deadline = ContinuousClock.now + .seconds(10)
        while true {
            do {
                reply = try readAll(fromUnixSocket: connectTo)
                break
            } catch let error as POSIXError where error.code == .ECONNREFUSED && ContinuousClock.now < deadline {
                usleep(20_000)
            }
        }
        let result = child.wait(timeout: .seconds(10))
        #expect(result.status == 0 && !result.timedOut, "\(result.errorOutput)")
        return (reply, result.output)
    }

    @Test func adoptsTheSocketNamedVarlink() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let path = directory.path("io.smartstack")
        let (reply, output) = try activate([path], ["--fdname=varlink"], connectTo: path, in: directory)
        // The environment is unset after take(), so no child of the daemon would inherit it.
        let expected = "fds=1 names=varlink varlink=varlink unix_stream=true listen_fds_env=unset\n"
        #expect(reply == expected)
        #expect(output == expected)
    }

    @Test func fallsBackToTheOnlyUnnamedSocket() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let path = directory.path("io.smartstack")
        let (reply, _) = try activate([path], [], connectTo: path, in: directory)
        #expect(reply == "fds=1 names=unknown varlink=unknown unix_stream=true listen_fds_env=unset\n")
    }

    @Test func picksVarlinkAmongSeveralSockets() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let metrics = directory.path("metrics")
        let varlink = directory.path("io.smartstack")
        let (reply, _) = try activate(
            [metrics, varlink], ["--fdname=metrics:varlink"], connectTo: varlink, in: directory)
        #expect(reply == "fds=2 names=metrics,varlink varlink=varlink unix_stream=true listen_fds_env=unset\n")
    }

    @Test func nothingPassedWithoutActivation() throws {
        let probe = try #require(TestEnvironment.probe)
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        // LISTEN_PID names another process: the sockets are not for us.
        let result = try ChildProcess.run(
            probe, ["listen"],
            environment: TestEnvironment.cleanEnvironment(["LISTEN_FDS": "1", "LISTEN_PID": "1"]), in: directory.url)
        #expect(result.status == 0, "\(result.errorOutput)")
        #expect(result.output == "fds=0 names= varlink=none unix_stream=false listen_fds_env=unset\n")
    }
}
