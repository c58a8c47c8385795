import ArgumentParser
import SmartStackAnalysis
import SmartStackCtlKit
import SmartStackProtocol
import SmartStackSystemd

#if canImport(Glibc)
    import Glibc
#endif

struct Analyze: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Analyse smartstackd's ranking decisions from the journal.",
        discussion: """
            Reads the order-changed, suggestion and reload entries (by MESSAGE_ID) that smartstackd wrote to the \
            journal, with libsystemd's journal API: the local journal, --directory D (such as \
            /var/log/journal/MACHINE-ID copied from another machine) or --file F (repeatable). Entries are \
            smartstackd's (SYSLOG_IDENTIFIER=smartstackd) unless --unit or --user-unit names the unit. \
            Prints per stack: decisions (order-changed entries), top changes per hour, each widget's share \
            of time on top, the median time on top, why the top changed, suggestions, reloads; per widget: how \
            often relevance or behaviour surfaced it and, where the journal has engagement entries, taps after \
            being surfaced. --json prints one document; --html writes a self-contained report with an SVG \
            timeline per stack. Journals of several machines (as systemd-journal-remote collects them, see \
            docs/fleet.md) are analysed per machine (_MACHINE_ID) and merged, their stacks named \
            HOST/STACK, with a per-machine table; --machine keeps one machine's entries.
            """)
    @OptionGroup var global: GlobalOptions
    @Option(
        parsing: .unconditional,
        help: TimeArgument.help("Entries at or after this time"))
    var since: String?
    @Option(parsing: .unconditional, help: "Entries at or before this time (same forms as --since).") var until: String?
    @Option(help: "Entries of this system unit (_SYSTEMD_UNIT), such as smartstackd.service.") var unit: String?
    @Option(help: "Entries of this user unit (_SYSTEMD_USER_UNIT).") var userUnit: String?
    @Option(name: .customLong("file"), help: "Read this journal file (repeatable).") var files: [String] = []
    @Option(help: "Read the journal files in this directory.") var directory: String?
    @Option(help: "Also write a self-contained HTML report to this file.") var html: String?
    @Option(
        help: "Only this machine's entries: its machine id (_MACHINE_ID, or its first 8+ digits) or hostname.")
    var machine: String?

    func validate() throws {
        if unit != nil, userUnit != nil { throw ValidationError("--unit and --user-unit exclude each other") }
        if !files.isEmpty, directory != nil { throw ValidationError("--file and --directory exclude each other") }
    }

    func run() async throws {
        let nowSeconds = Int64(time(nil))
        let now = nowSeconds * 1_000_000
        let offset = TimeExpression.localOffset(atSeconds: nowSeconds)
        func bound(_ text: String?, _ option: String) throws -> Int64? {
            guard let text else { return nil }
            do {
                return try TimeExpression.parse(
                    text, now: now, utcOffsetSeconds: offset, offsetAt: TimeExpression.localOffset(atSeconds:))
            } catch {
                throw ValidationError("\(option): \(error.description)")
            }
        }
        let (from, to) = (try bound(since, "--since"), try bound(until, "--until"))
        if let from, let to, from > to {
            throw ValidationError("--since must not be later than --until (as journalctl has it)")
        }
        var query = JournalQuery(since: from, until: to)
        let sourceText: String
        if let directory {
            query.source = .directory(directory)
            sourceText = "directory \(directory)"
        } else if !files.isEmpty {
            query.source = .files(files)
            sourceText = "file\(files.count == 1 ? "" : "s") " + files.joined(separator: ", ")
        } else {
            query.source = .local(currentUserOnly: userUnit != nil && getuid() != 0)
            sourceText = "the local journal"
        }
        if let unit { query.scope = .unit(unit) } else if let userUnit { query.scope = .userUnit(userUnit) }

        let result: JournalQuery.Result
        do { result = try query.read() } catch {
            throw CtlFailure.noInput("cannot read \(sourceText): \(error)")
        }
        // A top is counted until now at the latest: `--until tomorrow` must not credit the current top with hours
        // it has not had yet.
        let until = query.until.map { min($0, now) }
        var report = Analyzer(since: query.since, until: until).analyzeFleet(result.records, machine: machine)
        if result.unreadable > 0 {
            report.notes.append("\(result.unreadable) matching entries lacked the fields the analysis needs")
        }
        if let html {
            let document = HTMLReport(report: report, source: sourceText, utcOffsetSeconds: offset).render()
            guard let handle = fopen(html, "wb") else {
                throw CtlFailure.cannotCreate("cannot write \(html): \(String(cString: strerror(errno)))")
            }
            let bytes = Array(document.utf8)
            let written = bytes.withUnsafeBytes { fwrite($0.baseAddress, 1, $0.count, handle) }
            let closed = fclose(handle)
            guard written == bytes.count, closed == 0 else { throw CtlFailure.cannotCreate("cannot write \(html)") }
        }
        var document = report.jsonObject
        document["source"] = .string(sourceText)
        if let html { document["html"] = .string(html) }
        global.emit(document) {
            AnalysisRenderer.render(report, source: sourceText, utcOffsetSeconds: offset, style: global.style)
                + (html.map { "\n\nHTML report written to \($0)." } ?? "")
        }
    }
}
