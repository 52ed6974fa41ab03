/// `plutil -help`.
enum HelpText {
    static let text = """
        plutil: [command_option] [other_options] file...
        The file '-' means standard input.
        Command options are (-lint is the default):
         -help, --help                 show this message and exit
         --version                     show AppHome's version and exit
         -lint                         check the property list files for syntax errors
         -convert fmt                  rewrite property list files in format
                                       fmt is one of: xml1 binary1 json swift objc
         -insert keypath -type value   insert a value into the property list before writing it out
                                       keypath is a key path: components separated by '.', '\\.' for a
                                       dot inside a key, a number for an index into an array (the last
                                       component may be the count of the array, to add at its end)
                                       type is one of: bool, integer, float, date, string, data, xml, json
                                       -bool: YES if passed "YES" or "true", otherwise NO
                                       -integer: a 64-bit integer
                                       -float: a 64-bit floating-point number
                                       -string: a UTF-8 string
                                       -date: a date as an XML property list writes it (2024-01-31T12:00:00Z)
                                       -data: base64-encoded bytes
                                       -xml: an XML property list, for compound values
                                       -json: a JSON fragment, for compound values
                                       -dictionary: an empty dictionary (takes no value)
                                       -array: an empty array (takes no value)
                                       -append appends the value to the array at keypath
         -replace keypath -type value  like -insert, but overwrites a value already at keypath
         -remove keypath               remove the value at keypath before writing the file out
         -extract keypath fmt          write the value at keypath as a new property list in fmt
                                       fmt is one of: xml1 binary1 json raw
                                       -expect type fails unless the value is of that type
                                       (bool, integer, float, string, date, data, dictionary, array)
                                       raw writes a string, number, "true"/"false", an ISO 8601 date,
                                       base64 data, an array's count or a dictionary's keys, one a line
         -type keypath                 print the type of the value at keypath (-expect type as above)
         -create fmt                   create an empty property list (fmt is xml1 or binary1)
         -p                            print the property list in a human-readable form
                                       (for reading, not for parsing: the form may change)
        Keyed archives (NSKeyedArchiver):
         -unarchive                    with -p, -convert xml1|json and -extract: show a keyed archive,
                                       or data holding one, as its object graph
         -archive                      with -convert binary1|xml1: make a keyed archive of a file in
                                       that object-graph form
        Other options, for -convert, -insert, -replace, -remove, -extract:
         -s                            be silent on success
         -o path                       write the result to path ('-' for standard output); with
                                       several files, the last one wins
         -e extension                  write the result beside each file, with this extension
         -r                            indent JSON output for reading
         -n                            no newline after raw and type output
         --                            every further argument is a file

        """
}
