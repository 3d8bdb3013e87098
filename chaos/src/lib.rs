//! `mobiwf-chaos`: a chaos run of the real binaries. A controller and three nodes (one in a
//! network namespace when the machine allows) run the paper's workflow (also with a person's
//! activity, completed through a node's API) and a chain, submitted without pause, while a
//! nemesis drawn from a seed kills, stalls, cuts off and moves them and sets hostile peers
//! at their doors; then the faults stop, the
//! mesh settles, and a checker holds every command's marks against what the controller shows.
//! The plan ([`schedule`]), the verdict ([`verdict`]) and the faults' cost ([`cost`]) are
//! pure; the rest runs processes.

pub mod cost;
pub mod report;
pub mod schedule;
pub mod suspicion;
pub mod verdict;
pub mod workflows;
