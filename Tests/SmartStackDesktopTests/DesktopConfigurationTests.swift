import SmartStackDesktop
import Testing

struct DesktopConfigurationTests {
    @Test func defaults() throws {
        let configuration = try DesktopConfiguration.parse("# nothing\n\n")
        #expect(configuration == DesktopConfiguration())
        #expect(configuration.bus == .user)
        #expect(configuration.stack == "desktop.apps")
        #expect(configuration.stackSize == 10)
        #expect(configuration.family == "systemMedium")
    }

    @Test func everyKey() throws {
        let configuration = try DesktopConfiguration.parse(
            """
            bus = system
            stack = kiosk.apps
            stackSize = 3
            family = systemSmall
            kind = launcher/main
            ignore = org.gnome.Terminal, org.freedesktop.*
            apps = a b c
            dedupSeconds = 2.5
            session = c1
            overviewLooks = no
            """)
        #expect(configuration.bus == .system)
        #expect(configuration.stack == "kiosk.apps")
        #expect(configuration.stackSize == 3)
        #expect(configuration.family == "systemSmall")
        #expect(configuration.kind == "launcher/main")
        #expect(configuration.ignore == ["org.gnome.Terminal", "org.freedesktop.*"])
        #expect(configuration.apps == ["a", "b", "c"])
        #expect(configuration.dedupSeconds == 2.5)
        #expect(configuration.session == "c1")
        #expect(!configuration.overviewLooks)
        #expect(DesktopConfiguration().overviewLooks)
        #expect(configuration.ignores("org.gnome.Terminal"))
        #expect(configuration.ignores("org.freedesktop.Notifications"))
        #expect(!configuration.ignores("org.gnome.Terminal2"))
    }

    @Test(arguments: [
        ("bus = both", 1, "bus"), ("stackSize = 0", 1, "stackSize"), ("stackSize = 11", 1, "stackSize"),
        ("\nfamily = huge", 2, "family"), ("colour = red", 1, "colour"), ("stack = a b", 1, "stack"),
        ("dedupSeconds = -1", 1, "dedupSeconds"), ("novalue", 1, ""), ("apps = a a", 1, "apps"),
        ("kind = a b", 1, "kind"), ("overviewLooks = maybe", 1, "overviewLooks"),
        // A key set twice, and a stack size the apps listed contradict (it was silently ignored).
        ("stackSize = 3\nstackSize = 4", 2, "stackSize"), ("apps = a b c d e\nstackSize = 3", 2, "stackSize"),
        ("stackSize = 3\n# x\napps = a b c d e", 3, "apps"),
    ])
    func badLinesNameLineAndKey(text: String, line: Int, key: String) {
        #expect(throws: DesktopConfigurationError.self) { try DesktopConfiguration.parse(text, source: "f.conf") }
        do {
            _ = try DesktopConfiguration.parse(text, source: "f.conf")
        } catch {
            #expect(error.line == line)
            #expect(error.key == key)
            #expect(error.description.hasPrefix("f.conf:\(line): "))
        }
    }
}
