// smartstackctl — the command line of smartstackd: every method of io.smartstack.Provider,
// io.smartstack.Shell, io.smartstack.Admin and org.varlink.service over the service's Varlink socket, as
// tables for people or --json for scripts; `explain` to see why a stack is ordered as it is, `replay` to
// feed a usage log, and `analyze` to study the ranking from the journal.

import ArgumentParser
import SmartStackCtlKit
import SmartStackProtocol

@main
enum SmartStackCtlMain {
    /// Global options may come first (`smartstackctl --address unix:PATH stacks`), as people write them:
    /// ArgumentParser reads a subcommand's options only after the subcommand, so leading ones move to the end.
    /// Failures print their message (or, with --json, a JSON document) on stderr and exit with the status
    /// `ExitStatus` documents.
    static func main() async {
        let arguments = GlobalOptions.reordered(Array(CommandLine.arguments.dropFirst()))
        let json = arguments.contains("--json")
        var parsed: (any ParsableCommand)?
        do {
            var command = try SmartStackCtl.parseAsRoot(arguments)
            parsed = command
            if var asyncCommand = command as? any AsyncParsableCommand {
                try await asyncCommand.run()
            } else {
                try command.run()
            }
        } catch let failure as CtlFailure {
            if json, let document = failure.jsonDocument {
                Output.error(JSONText.compact(document))
            } else {
                Output.error(failure.message(style: Terminal.current().errorStyle))
            }
            SmartStackCtl.exit(withError: ExitCode(failure.status.rawValue))
        } catch let error as ValidationError {
            // Checks that need the parsed values run in `run()`; ArgumentParser would print the root's usage for
            // them ("smartstackctl <subcommand>"), so print the usage of the command that was run, as it does
            // for a check in `validate()`.
            guard let parsed else { SmartStackCtl.exit(withError: error) }
            let command = commandPath(to: type(of: parsed)).joined(separator: " ")
            Output.error(
                "Error: \(error.message)\nUsage: \(SmartStackCtl.usageString(for: type(of: parsed)))\n"
                    + "  See '\(command) --help' for more information.")
            SmartStackCtl.exit(withError: ExitCode(ExitStatus.usage.rawValue))
        } catch {
            // With the global options moved behind it, an unknown verb reads as an unknown option: name the verb.
            if let verb = arguments.first, !verb.hasPrefix("-"),
                !SmartStackCtl.configuration.subcommands.contains(where: {
                    $0._commandName == verb || $0.configuration.aliases.contains(verb)
                })
                    && verb != "help"
            {
                Output.error("Error: unknown command '\(verb)'\n" + SmartStackCtl.usageString())
                SmartStackCtl.exit(withError: ExitCode(ExitStatus.usage.rawValue))
            }
            SmartStackCtl.exit(withError: error)
        }
    }

    /// The names from the root to a subcommand (`smartstackctl stack configure`).
    static func commandPath(
        to command: any ParsableCommand.Type, from root: any ParsableCommand.Type = SmartStackCtl.self
    ) -> [String] {
        if command == root { return [root._commandName] }
        for child in root.configuration.subcommands {
            let path = commandPath(to: command, from: child)
            if path.last == command._commandName { return [root._commandName] + path }
        }
        return []
    }
}

struct SmartStackCtl: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "smartstackctl",
        abstract: "Control and inspect smartstackd, the Smart Stack widget ranking service.",
        discussion: """
            GLOBAL OPTIONS (before or after the command):
              --address unix:PATH   the service's socket (also $SMARTSTACK_ADDRESS)
              --json                one JSON document instead of tables (watch: one per line)
              --timeout SECONDS     how long to wait for each reply, 0.001-86400, 0 for no limit (default 120)

            Talks to smartstackd over its Varlink socket: --address unix:PATH, else $SMARTSTACK_ADDRESS, else \
            $XDG_RUNTIME_DIR/smartstack/io.smartstack for a user (the system's /run/smartstack/io.smartstack when \
            the user has none) and /run/smartstack/io.smartstack for root. Output is \
            tables for people (colour only on a terminal, never with NO_COLOR set) and one JSON document with \
            --json (watch: one per line).

            Exit status: \(ExitStatus.allCases.map { "\($0.rawValue) \($0.meaning)" }.joined(separator: "; ")).
            """,
        version: ServiceVersion.current,
        groupedSubcommands: [
            CommandGroup(
                name: "Stacks",
                subcommands: [
                    Stacks.self, StackCommand.self, Watch.self, Look.self, Engage.self, ContextCommand.self,
                    Explain.self, Budget.self,
                ]),
            CommandGroup(
                name: "Providers",
                subcommands: [
                    WidgetCommand.self, Donate.self, DonationsCommand.self, TimelineCommand.self, Reload.self,
                    WatchReloads.self, RelevanceCommand.self, LiveCommand.self,
                ]),
            CommandGroup(
                name: "Service",
                subcommands: [Stats.self, LogLevel.self, Owners.self, Info.self, Introspect.self, Call.self]),
            CommandGroup(name: "Workloads and analysis", subcommands: [Replay.self, Analyze.self]),
        ])
}
