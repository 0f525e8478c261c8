"""The subcommands of ``python -m emulator``: one module each, one convention.

Every module here exposes ``add_parser(subparsers) -> ArgumentParser`` (its arguments) and
``run(args) -> int`` (its exit status). Bad input is raised as an exception the command line
maps to exit status 2 with one ``error:`` line; ``emulator.cli`` lists the modules and does
the mapping. The modules sit at the top of the layers: they may import the scenario layer,
the bench library and the agents, and nothing imports them but ``emulator.cli``.
"""
