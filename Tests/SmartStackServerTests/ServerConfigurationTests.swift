import SmartStackProtocol
import SmartStackServer
import Testing

@Suite("Server configuration")
struct ServerConfigurationTests {
    @Test("a file sets limits; comments and blank lines are ignored")
    func parses() throws {
        let configuration = try ServerConfiguration.parse(
            """
            # limits
            maxFrameSize = 4096
            maxConnections=8   # few
            subscriberQueue = 3

            retentionDays = 7
            logLevel = debug
            """)
        #expect(configuration.maxFrameSize == 4_096)
        #expect(configuration.maxConnections == 8)
        #expect(configuration.host.subscriberQueue == 3)
        #expect(configuration.engine.retention == 7 * 86_400)
        #expect(configuration.logLevel == .debug)
    }

    @Test(
        "bad lines name the line and key",
        arguments: [
            ("maxFrameSize = 12", "c:1: maxFrameSize:"),
            ("bogus = 1", "c:1: bogus: unknown key"),
            ("\nmaxConnections", "c:2: expected 'key = value'"),
            ("logLevel = loud", "c:1: logLevel:"),
            ("reloadBudget = 5", "reloadBudget"),
        ])
    func rejects(text: String, expected: String) {
        #expect {
            _ = try ServerConfiguration.parse(text, source: "c")
        } throws: { error in
            "\(error)".contains(expected)
        }
    }

    @Test("default paths follow DESIGN.md for users, root and systemd")
    func defaults() {
        let user = ServiceDefaults(environment: ["XDG_RUNTIME_DIR": "/run/user/1000", "HOME": "/home/u"], uid: 1_000)
        #expect(user.socketPath == "/run/user/1000/smartstack/io.smartstack")
        #expect(user.stateDirectory == "/home/u/.local/share/smartstack")
        #expect(!user.isSystem)
        let system = ServiceDefaults(environment: ["STATE_DIRECTORY": "/var/lib/smartstack:/x"], uid: 0)
        #expect(system.socketPath == "/run/smartstack/io.smartstack")
        #expect(system.stateDirectory == "/var/lib/smartstack")
        let bare = ServiceDefaults(environment: ["XDG_DATA_HOME": "/d"], uid: 42)
        #expect(bare.socketPath == "/tmp/smartstack-42/io.smartstack")
        #expect(bare.stateDirectory == "/d/smartstack")
    }
}
