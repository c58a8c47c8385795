/// An application unit of the XDG/systemd desktop convention, parsed from its unit name.
///
/// GNOME (≥ 3.34) and KDE Plasma (≥ 5.19) start each launched application in a transient unit of the user's
/// service manager named `app-[<launcher>-]<ApplicationID>[@<RANDOM>].service` or
/// `app-[<launcher>-]<ApplicationID>-<RANDOM>.scope` (systemd's "Desktop Environment Integration"). Each
/// part is unit-name escaped (`systemd-escape`), so a dash inside the launcher or the application id is
/// `\x2d`; an unescaped name with more dashes than the convention allows is read as launcher, then the rest
/// as the application id (desktops that skip the escaping).
public struct AppUnit: Sendable, Hashable {
    /// How the application was started.
    public enum UnitType: String, Sendable, Hashable {
        /// A service the launcher asked the manager to start (`.service`).
        case service
        /// A process the launcher started itself and moved into a scope (`.scope`).
        case scope
    }

    /// The full unit name, e.g. `app-gnome-org.gnome.Nautilus-1234.scope`.
    public var name: String
    /// The launcher, e.g. `gnome`, `flatpak`, `KDE`, when the name has one.
    public var launcher: String?
    /// The application id (the desktop file id without `.desktop`), unescaped: `org.gnome.Nautilus`.
    public var applicationID: String
    /// The random part that makes the unit unique, when there is one.
    public var random: String?
    public var type: UnitType

    /// Parses a unit name; `nil` for any unit that is not an application's (`app-*.service`/`app-*.scope`).
    public init?(unitName: String) {
        let type: UnitType
        let body: Substring
        if unitName.hasSuffix(".service") {
            type = .service
            body = unitName.dropLast(".service".count)
        } else if unitName.hasSuffix(".scope") {
            type = .scope
            body = unitName.dropLast(".scope".count)
        } else {
            return nil
        }
        guard body.hasPrefix("app-") else { return nil }
        var rest = body.dropFirst("app-".count)
        var random: Substring?
        switch type {
        case .service:
            // app-[<launcher>-]<ApplicationID>[@<RANDOM>].service; a template instance is the random part.
            if let at = rest.firstIndex(of: "@") {
                random = rest[rest.index(after: at)...]
                rest = rest[..<at]
            }
        case .scope:
            // app-[<launcher>-]<ApplicationID>-<RANDOM>.scope: the random part is required.
            guard let dash = rest.lastIndex(of: "-") else { return nil }
            random = rest[rest.index(after: dash)...]
            rest = rest[..<dash]
            guard random?.isEmpty == false else { return nil }
        }
        guard !rest.isEmpty else { return nil }
        let parts = rest.split(separator: "-", omittingEmptySubsequences: false)
        guard !parts.contains(where: \.isEmpty) else { return nil }
        let launcher: Substring?
        let application: Substring
        if parts.count == 1 {
            launcher = nil
            application = parts[0]
        } else {
            launcher = parts[0]
            application = rest[parts[1].startIndex...]
        }
        var applicationPart = application
        if launcher == "dbus", application.hasPrefix(":"), let dash = application.firstIndex(of: "-") {
            // A D-Bus activated service (dbus-broker): app-dbus-:1.2-org.gnome.Nautilus@0.service. The bus
            // connection's unique name comes first; the application id is after it.
            applicationPart = application[application.index(after: dash)...]
        }
        guard let applicationID = Self.unescape(applicationPart), !applicationID.isEmpty else { return nil }
        self.name = unitName
        self.launcher = launcher.flatMap { Self.unescape($0) }
        self.applicationID = applicationID
        self.random = random.map(String.init)
        self.type = type
    }

    /// `systemd-escape` undone: `\xHH` sequences become their bytes; `nil` for a malformed sequence or bytes
    /// that are not UTF-8.
    public static func unescape(_ text: some StringProtocol) -> String? {
        var bytes: [UInt8] = []
        var iterator = Array(text.utf8)[...]
        while let byte = iterator.popFirst() {
            guard byte == UInt8(ascii: "\\") else {
                bytes.append(byte)
                continue
            }
            guard iterator.popFirst() == UInt8(ascii: "x"), let high = iterator.popFirst().flatMap(hexValue),
                let low = iterator.popFirst().flatMap(hexValue)
            else { return nil }
            bytes.append(high << 4 | low)
        }
        return String(validating: bytes, as: UTF8.self)
    }

    /// `systemd-escape` of one part of a unit name: bytes outside `[A-Za-z0-9:_.]` (and a leading `.`) as
    /// `\xHH`, so that `-` only ever separates parts.
    public static func escape(_ text: String) -> String {
        var result = ""
        for (index, byte) in text.utf8.enumerated() {
            let plain =
                (UInt8(ascii: "a")...UInt8(ascii: "z")).contains(byte)
                || (UInt8(ascii: "A")...UInt8(ascii: "Z")).contains(byte)
                || (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) || byte == UInt8(ascii: ":")
                || byte == UInt8(ascii: "_") || (byte == UInt8(ascii: ".") && index > 0)
            if plain {
                result.unicodeScalars.append(Unicode.Scalar(byte))
            } else {
                let hex = String(byte, radix: 16)
                result += "\\x" + (hex.count == 1 ? "0" + hex : hex)
            }
        }
        return result
    }

    private static func hexValue(_ byte: UInt8) -> UInt8? {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): byte - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): byte - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): byte - UInt8(ascii: "A") + 10
        default: nil
        }
    }
}

extension AppUnit {
    /// The application id as a smartstackd app id (1-255 bytes of letters, digits, `.`, `_` and `-`): kept
    /// as it is when it already is one, otherwise each other byte written `_HH` (and `_` itself `_5F`), cut to
    /// 255 bytes. Two ids that need no escaping never share an app id, nor do two that both need it and fit; but an
    /// escaped id can equal one that is valid as it is (`a_ü` and `a_5F_C3_BC`), and ids cut at 255 bytes can meet.
    /// Escaping `_` in valid ids too would remove the first case and rename every stored app with an `_`.
    public static func smartStackAppID(_ applicationID: String) -> String {
        let valid =
            applicationID.utf8.allSatisfy(isAppIDByte) && !applicationID.isEmpty && applicationID.utf8.count <= 255
        if valid { return applicationID }
        var result = ""
        for byte in applicationID.utf8 {
            if isAppIDByte(byte) && byte != UInt8(ascii: "_") {
                result.unicodeScalars.append(Unicode.Scalar(byte))
            } else {
                let hex = String(byte, radix: 16, uppercase: true)
                result += "_" + (hex.count == 1 ? "0" + hex : hex)
            }
        }
        return String((result.isEmpty ? "_" : result).prefix(255))
    }

    static func isAppIDByte(_ byte: UInt8) -> Bool {
        (UInt8(ascii: "a")...UInt8(ascii: "z")).contains(byte) || (UInt8(ascii: "A")...UInt8(ascii: "Z")).contains(byte)
            || (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) || byte == UInt8(ascii: ".")
            || byte == UInt8(ascii: "_") || byte == UInt8(ascii: "-")
    }
}
