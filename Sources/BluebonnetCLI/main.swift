// The `bluebonnet` executable: everything but the Session calls lives in BluebonnetCLICore;
// Fetcher.swift is the one file that talks to the Session API. README.md beside this file
// documents the command line, the --json schema, the error kinds and the exit statuses.
import BluebonnetCLICore
import Foundation

let status = await CLI.run(
    arguments: Array(CommandLine.arguments.dropFirst()),
    fetcher: Fetcher(),
    version: Fetcher.libraryVersion
)
exit(status)
