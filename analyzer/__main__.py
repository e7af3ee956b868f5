from mwms_doctor.entry import main

main()
