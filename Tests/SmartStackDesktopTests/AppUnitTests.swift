import SmartStackDesktop
import Testing

struct AppUnitTests {
    @Test(
        arguments: [
            ("app-gnome-org.gnome.Nautilus-1234.scope", "gnome", "org.gnome.Nautilus", "1234"),
            ("app-flatpak-org.mozilla.firefox@5678.service", "flatpak", "org.mozilla.firefox", "5678"),
            ("app-org.kde.konsole@a1b2c3.service", nil, "org.kde.konsole", "a1b2c3"),
            ("app-firefox-99.scope", nil, "firefox", "99"),
            ("app-org.kde.amarok.service", nil, "org.kde.amarok", nil),
            ("app-gnome-firefox\\x2desr-4242.scope", "gnome", "firefox-esr", "4242"),
            ("app-KDE-org.kde.okular@12345.service", "KDE", "org.kde.okular", "12345"),
            // Unescaped dashes in the id (a desktop that skips escaping): launcher first, the rest the id.
            ("app-gnome-my-app-7.scope", "gnome", "my-app", "7"),
            // D-Bus activated (dbus-broker): the bus connection's unique name before the id.
            ("app-dbus-:1.2-org.gnome.Nautilus@0.service", "dbus", "org.gnome.Nautilus", "0"),
            ("app-dbus-:1.120-org.freedesktop.portal.Desktop@3.service", "dbus", "org.freedesktop.portal.Desktop", "3"),
        ] as [(String, String?, String, String?)])
    func parsesApplicationUnits(name: String, launcher: String?, id: String, random: String?) throws {
        let unit = try #require(AppUnit(unitName: name))
        #expect(unit.launcher == launcher)
        #expect(unit.applicationID == id)
        #expect(unit.random == random)
    }

    @Test(arguments: [
        "smartstackd.service", "session-3.scope", "app.slice", "app-gnome-foo.slice", "app-.scope",
        "app-foo.scope",  // a scope needs its random part
        "app-gnome--1.scope", "app-x\\x4.scope", "dbus.socket", "app-gnome-org.gnome.Nautilus-.scope",
        "user@1000.service",
    ])
    func rejectsOtherUnits(name: String) {
        #expect(AppUnit(unitName: name) == nil)
    }

    @Test func escapeRoundTrips() throws {
        for text in ["firefox-esr", "sur-A.#32770", "a b\\c", ".hidden", "Ünïcode-app", "x"] {
            let escaped = AppUnit.escape(text)
            #expect(!escaped.contains("-"))
            #expect(AppUnit.unescape(escaped) == text)
            let unit = try #require(AppUnit(unitName: "app-gnome-\(escaped)-1.scope"))
            #expect(unit.applicationID == text)
        }
    }

    @Test func appIDsAreValidAndDistinct() {
        #expect(AppUnit.smartStackAppID("org.gnome.Nautilus") == "org.gnome.Nautilus")
        #expect(AppUnit.smartStackAppID("a b") == "a_20b")
        #expect(AppUnit.smartStackAppID("a_20b") == "a_20b")
        // An id that is valid stays; one that is not is escaped with _ itself escaped: no collisions.
        #expect(AppUnit.smartStackAppID("a_ b") == "a_5F_20b")
        #expect(AppUnit.smartStackAppID(String(repeating: "x", count: 300)).utf8.count == 255)
    }
}
