# How long the longest GoogleTest cases took on the 2-core development machine (seconds, the clean
# clone's `./scripts/test` of 2026-12-06, three at a time), as ctest's COST: with -j, ctest starts
# the costliest first, so no long test is left to run alone at the end (a fresh build directory
# has no timings of its own). A COST set here stands: ctest's own timings
# (Testing/Temporary/CTestCostData.txt) apply only to tests without one.
# Included by CTestTestfile.cmake after gtest_discover_tests' files (CMakeLists.txt), so these
# tests are defined; a name that is not (renamed) is ignored: it only runs in the usual order. The
# other long tests (added with add_test) have their COST in CMakeLists.txt.
set_tests_properties(api.ContainerSlurm.slurm_containers_RunIsolatedOnExactlyTheirGpus PROPERTIES COST 257)
set_tests_properties(api.SlurmExecutor.slurm_JobsFlowThroughSlurmAndNodeFailuresRequeue PROPERTIES COST 139)
set_tests_properties(api.ContainerInstance.local_containers_SshAndNotebookReachAnInstanceAcrossStopAndStart PROPERTIES COST 118)
set_tests_properties(api.ContainerLocal.local_containers_RunWithoutSlurmAndSurviveAServerKill PROPERTIES COST 99)
set_tests_properties(api.ImageBuilder.BuildsARecipeWithMmdebstrap PROPERTIES COST 92)
set_tests_properties(api.PostgresFailover.KillingTheLeaderFiveTimesLosesNoWriteAndRunsNothingTwice PROPERTIES COST 70)
set_tests_properties(api.ContainerNodeVolume.slurm_containers_ANodeVolumeIsCopiedWhenItsInstanceMovesAndTheCopyMeasured PROPERTIES COST 69)
set_tests_properties(api.Demo.ReplaysItsPastDaysThroughTheLiveServices PROPERTIES COST 67)
set_tests_properties(api.ContainerSlurmInstance.slurm_containers_AnInstanceIsReachedBySshAndNotebookAcrossStopAndStart PROPERTIES COST 64)
set_tests_properties(api.Postgres.TheDemoReplayBillsExactlyAsOnSqlite PROPERTIES COST 51)
set_tests_properties(api.ContainerImageSave.local_containers_ARunningInstanceIsSavedAsAnImageJobsRunIn PROPERTIES COST 48)
set_tests_properties(api.SlurmExecutor.slurm_AJobThatEndedWhileTheServerWasDownTakesItsEndFromAccounting PROPERTIES COST 48)
set_tests_properties(api.ContainerAccept.local_containers_AnAcceptanceJobRunsInAContainerAndIsRecordedFromItsLog PROPERTIES COST 47)
set_tests_properties(api.ContainerFaultRetry.local_containers_AKilledWorkerRequeuesTheJobUntilItsRetriesAreUsed PROPERTIES COST 44)
set_tests_properties(api.Postgres.BackupRestoreAndMigrateKeepEveryInvoice PROPERTIES COST 30)
set_tests_properties(api.SlurmExecutor.slurm_AJobThatEndedWhileTheServerWasDownBeforeItsSubmissionWasStoredRunsOnce PROPERTIES COST 25)
set_tests_properties(api.Hostile.AnnouncedBodiesCannotPinTheServersMemory PROPERTIES COST 24)
set_tests_properties(api.SlurmExecutor.slurm_AJobPrintingWithoutEndKeepsOnlyTheEndOfItsLog PROPERTIES COST 23)
set_tests_properties(api.SlurmExecutor.slurm_NodesTakeTheirTopologyFromSlurmAndJobsTheirBinding PROPERTIES COST 23)
set_tests_properties(api.LocalSlurm.slurm_cli_RunsTracksCancelsAndRequeuesRealJobs PROPERTIES COST 22)
