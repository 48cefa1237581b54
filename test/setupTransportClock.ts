// Every module that imports the transport's clock gets the jest suites' one (test/transportClock.ts).
jest.mock('../nodes/shared/transport/clock', () => jest.requireActual('./transportClock'));
