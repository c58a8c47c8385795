import SmartStackCore
import SmartStackProtocol
import SmartStackStore
import Testing

@testable import SmartStackServer

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

    @Test("the stability limits (swipe grace period, minimum time on top, daily rotations) reach the engine's settings")
    func stabilityLimits() async throws {
        let configuration = try ServerConfiguration.parse(
            """
            swipeGracePeriodSeconds = 60
            minimumTimeOnTopSeconds = 0
            maxRotationsPerWidgetPerDay = 3
            """)
        #expect(configuration.engine.swipeGracePeriod == 60)
        #expect(configuration.engine.minimumTimeOnTop == 0)
        #expect(configuration.engine.maxRotationsPerWidgetPerDay == 3)
        var expected = EngineSettings()
        (expected.swipeGracePeriod, expected.minimumTimeOnTop, expected.maxRotationsPerWidgetPerDay) = (60, 0, 3)
        #expect(configuration.engine == expected)
        // The engine the service builds runs under them.
        let host = EngineHost(
            settings: configuration.engine, limits: configuration.host, clock: ManualClock(), log: InMemoryEventLog(),
            logger: ServerFixture.logger)
        #expect(await host.perform { $0.engine.settings } == expected)
        // Set out of the engine's range in code, they are named as a file writes them.
        for (name, change): (String, (inout EngineSettings) -> Void) in [
            ("swipeGracePeriodSeconds", { $0.swipeGracePeriod = -1 }),
            ("minimumTimeOnTopSeconds", { $0.minimumTimeOnTop = 1e6 }),
            ("maxRotationsPerWidgetPerDay", { $0.maxRotationsPerWidgetPerDay = 0 }),
        ] {
            var bad = ServerConfiguration()
            change(&bad.engine)
            #expect {
                _ = try bad.validated(source: "c")
            } throws: { error in
                (error as? ConfigurationError)?.key == name
            }
        }
    }

    @Test(
        "bad lines name the line and key",
        arguments: [
            ("maxFrameSize = 12", "c:1: maxFrameSize:"),
            ("bogus = 1", "c:1: bogus: unknown key"),
            ("\nmaxConnections", "c:2: expected 'key = value'"),
            ("logLevel = loud", "c:1: logLevel:"),
            ("reloadBudget = 5", "reloadBudget"),
            ("swipeGracePeriodSeconds = 86401", "c:1: swipeGracePeriodSeconds:"),
            ("swipeGracePeriodSeconds = -1", "c:1: swipeGracePeriodSeconds:"),
            ("minimumTimeOnTopSeconds = 86401", "c:1: minimumTimeOnTopSeconds:"),
            ("minimumTimeOnTopSeconds = 1.5", "c:1: minimumTimeOnTopSeconds:"),
            ("maxRotationsPerWidgetPerDay = 0", "c:1: maxRotationsPerWidgetPerDay:"),
            ("maxRotationsPerWidgetPerDay = 1441", "c:1: maxRotationsPerWidgetPerDay:"),
            // A key set twice (the last line won silently, for the access policy's keys too).
            ("shells = uid:1000\nshells = uid:65534", "c:2: shells: set again (first at c:1)"),
            ("maxFrameSize = 2048\n# more\nmaxFrameSize = 4096", "c:3: maxFrameSize: set again (first at c:1)"),
            ("app.org.ex.a = uid:1\napp.org.ex.a = uid:2", "c:2: app.org.ex.a: set again"),
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
