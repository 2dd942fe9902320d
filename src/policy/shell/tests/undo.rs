//! The bypass guard where no checkpoint undoes: every push but a plain
//! fast-forward one of named branches, in any spelling git or the shell
//! accepts; commands the guard cannot read completely that may reach a
//! destructive program; and the project root or its `.git` as a whole.

use super::*;

fn guarded(command: &str) -> bool {
    check("bash", command).catastrophic
}

fn asks(commands: &[&str]) {
    let missed: Vec<String> = commands
        .iter()
        .filter(|c| !guarded(c))
        .map(|c| format!("{c:?}: {}", check("bash", c).reason))
        .collect();
    assert!(
        missed.is_empty(),
        "escaped the guard:\n{}",
        missed.join("\n")
    );
}

fn runs(commands: &[&str]) {
    let caught: Vec<String> = commands
        .iter()
        .filter(|c| guarded(c))
        .map(|c| format!("{c:?}: {}", check("bash", c).reason))
        .collect();
    assert!(
        caught.is_empty(),
        "asked without need:\n{}",
        caught.join("\n")
    );
}

#[test]
fn plain_fast_forward_pushes_run() {
    runs(&[
        "git push",
        "git push origin main",
        "git push -u origin feature",
        "git push origin HEAD:main",
        "git push --set-upstream origin feature",
        "git push --tags",
        "git push --all",
        "git push -v -n origin feature",
        "git push --dry-run origin main",
        "git push --follow-tags origin main",
        "git push --no-force-with-lease origin main",
        "git push -o ci.skip origin main",
        "git -C sub push origin main",
        "/usr/bin/git push origin main",
        "git status",
        "git log --oneline",
        "git commit -m 'push the fix'",
    ]);
}

#[test]
fn every_forcing_spelling_asks() {
    asks(&[
        "git push --force origin feature",
        "git push --force origin main",
        "git push --forc origin main",
        "git push --fo origin main",
        "git push --f origin main",
        "git push --force-w origin main",
        "git push --force-with-lease origin main",
        "git push --force-with-lease=main:abc origin main",
        "git push --force-if-includes origin main",
        "git push --force= origin main",
        "git push -f",
        "git push -uf origin main",
        "git push -fu origin main",
        "git push -vf origin x",
        "git push origin +main",
        "git push origin +HEAD:main",
        "git push origin +x",
        "git push +x",
        "git push --all -f",
        "git push --tags --force",
        "git push 'origin' '--force'",
        "git push \"-f\" origin main",
        "git push -- origin +main",
        "\\git push -f",
        "g\\it push -f origin main",
        "/usr/bin/git push -f",
        "command git push -f",
        "exec git push -f",
        "nice git push -f",
        "nice -n 5 git push -f",
        "timeout 5 git push -f",
        "env git push -f",
        "xargs git push -f",
        "cd x && git push --force origin main",
        "git push origin main && git push -f origin x",
    ]);
}

#[test]
fn deleting_mirroring_and_pruning_pushes_ask() {
    asks(&[
        "git push origin :release",
        "git push origin :refs/heads/release",
        "git push origin release:",
        "git push -d origin release",
        "git push origin -d release",
        "git push --delete origin release",
        "git push --del origin release",
        "git push --d origin release",
        "git push --mirror origin",
        "git push --mirr origin",
        "git push --m origin",
        "git push --prune origin",
        "git push --pru origin",
        "git push --receive-pack='rm -rf ~' origin main",
        "git push --exec=x origin main",
        "git send-pack --force origin main",
        "git http-push x main",
    ]);
}

#[test]
fn pushes_reached_through_configuration_aliases_and_the_environment_ask() {
    asks(&[
        "git -c alias.p='push --force' p",
        "git -c alias.p=\"push --force\" p origin main",
        "git -c remote.origin.mirror=true push",
        "git -c push.default=matching push",
        "git --config-env=remote.origin.push=X push",
        "git --config-env remote.origin.push=X push",
        "git --exec-path=/tmp push",
        "git p",
        "git pf origin main",
        "git $SUB origin main",
        "GIT_CONFIG_COUNT=1 GIT_CONFIG_KEY_0=remote.origin.mirror GIT_CONFIG_VALUE_0=true git push",
        "env GIT_CONFIG_PARAMETERS=\"'remote.origin.mirror=true'\" git push",
        "export GIT_CONFIG_COUNT=1; git push",
        "git submodule foreach 'git push -f'",
        "git rebase --exec 'git push -f' main",
        "git push origin $BRANCH",
        "git push $REMOTE main",
        "git push origin \"$(git branch --show-current)\"",
        "sh -c 'git push -f'",
        "bash -c 'git push --mirr origin'",
        "bash -c 'git push origin :release'",
        "sh -c \"git -c alias.p='push --force' p\"",
        "bash <<EOF\ngit push --force-w origin main\nEOF",
        "echo 'git push --delete origin x' | sh",
    ]);
}

#[test]
fn commands_the_guard_cannot_read_ask_when_they_may_reach_destruction() {
    asks(&[
        "x=~; rm -rf \"$x\"",
        "rm -rf \"$TARGET\"",
        "rm -rf \"${HOME:?}\"",
        "rm -rf $(pwd)",
        "rm -rf `pwd`",
        "$X -rf build",
        "\"$RM\" x",
        "$(echo rm) -rf x",
        "`echo rm` -rf x",
        "eval rm -rf x",
        "eval \"$CMD\"",
        "eval 'git push -f'",
        "ls | xargs rm",
        "ls | xargs -0 rm -rf",
        "find . -name x -exec rm -rf {} +",
        "find . -execdir rm {} \\;",
        "for f in *; do rm -rf $f; done",
        "for d in a b; do dd if=/dev/zero of=$d; done",
        "while read f; do rm \"$f\"; done < list",
        "f() { rm -rf \"$1\"; }; f .",
        "f() { git push \"$@\"; }; f -f origin main",
        "dd if=x of=$DEV",
        "mkfs.ext4 $DEV",
        "mke2fs /dev/sdb",
        "mke2fs $D",
        "chmod -R 000 \"$D\"",
        "chmod --rec 000 ~",
        "chown -R u:u $D",
        "bash <<EOF\nrm -rf build\nEOF",
        "python3 - <<EOF\nimport os; os.system('rm -rf x')\nEOF",
        "python3 -c \"import os; os.system('rm -rf x')\"",
        "sh -c 'rm -rf build'",
        "dd if=/dev/zero of=//dev/sda",
        "dd if=/dev/zero of=/dev/../dev/vda",
        "echo x > /dev/vda",
        "cat img > /dev/nvme0n1",
        "cat img > //dev/sda",
    ]);
}

#[test]
fn harmless_opaque_commands_run() {
    runs(&[
        "echo $HOME",
        "for f in *.rs; do wc -l $f; done",
        "cargo test 2>&1 | tail -n $N",
        "echo \"$(date)\"",
        "ls $(pwd)/src",
        "python3 -c 'print(1)'",
        "find . -name '*.rs' -exec wc -l {} +",
        "ls | xargs wc -l",
        "while true; do cargo build && break; done",
        "echo x > /dev/null",
        "echo x 2> /dev/stderr",
        "rm -rf build",
        "rm -f notes.txt",
        "rm -rf target/debug",
        "chmod -R u+w target",
        "find . -name '*.o' -delete",
        "find build -delete",
        "cat > x.sh <<EOF\nrm -rf build\nEOF",
    ]);
}

#[test]
fn the_project_root_and_its_git_as_a_whole_ask() {
    asks(&[
        "rm -rf .",
        "rm -rf ./",
        "rm -rf ./*",
        "rm -rf *",
        "rm -rf \"$PWD\"",
        "rm -rf \"${PWD}\"",
        "rm -rf $PWD/",
        "rm -rf ../project",
        "rm -rf ../project/",
        "rm -rf ~+",
        "rm -rf /home/u/project",
        "rm -rf /home/u/Project/../project",
        "rm --r --forc ../project",
        "rm -rf .git",
        "rm -rf .git/",
        "rm -rf .git/*",
        "rm -rf .g?t",
        "rm -rf .gi*",
        "rm -rf .[g]it",
        "rm -rf ./.git",
        "find . -delete",
        "find -delete",
        "find . -type f -delete",
        "find . -mindepth 1 -delete",
        ": > .git/HEAD",
        "echo > .git/index",
        "cat /dev/null > .git/config",
        "truncate -s 0 .git/HEAD; echo $X",
    ]);
}
