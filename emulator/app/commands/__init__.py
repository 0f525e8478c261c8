"""The subcommands of ``python -m emulator``: one module each, one convention.

Every command module here exposes ``run(args) -> int`` (its exit status); its arguments are
``arguments.add_<command>(subparsers)``, kept in that one light module so that the parser can
be built at each start while only the chosen command's module is imported. Bad input is raised
as an exception the command line maps to exit status 2 with one ``error:`` line;
``emulator.cli`` lists the modules and does the mapping. The modules sit at the top of the
layers: they may import the scenario layer, the bench library and the agents, and nothing
imports them but ``emulator.cli``.
"""
