/* commands - one entry point per subcommand (argv[0] is the subcommand name). */
#ifndef CLI_COMMANDS_H
#define CLI_COMMANDS_H

int cmd_push(int argc, char **argv);
int cmd_pull(int argc, char **argv);
int cmd_ls(int argc, char **argv);
int cmd_show(int argc, char **argv);
int cmd_verify(int argc, char **argv);
int cmd_rm(int argc, char **argv);
int cmd_prune(int argc, char **argv);
int cmd_cleanup(int argc, char **argv);

#endif
